package claudetest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hitl-sh/hitl/internal/agenttest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// PermissionToolName is the name of a PermissionServer's one tool; Claude
// Code calls it as mcp__<server name>__approve.
const PermissionToolName = "approve"

// dirEnv names, in the environment of a test binary started as a stdio MCP
// server, the PermissionServer's directory.
const dirEnv = "CLAUDETEST_PERMISSION_SERVER_DIR"

// PermissionReply is how a PermissionServer's tool answers.
type PermissionReply struct {
	// Text is the result's one text item, such as
	// {"behavior": "allow", "updatedInput": {…}}.
	Text string
	// IsError marks the result as a tool error.
	IsError bool
	// Crash makes the server's process exit (status 3) instead of answering;
	// over HTTP the call gets a JSON-RPC error instead.
	Crash bool
}

// Behavior returns a reply whose text is v marshalled as JSON.
func Behavior(v any) PermissionReply {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return PermissionReply{Text: string(b)}
}

// PermissionCall is one call of a PermissionServer's tool.
type PermissionCall struct {
	// Arguments are the call's arguments as sent.
	Arguments json.RawMessage `json:"arguments"`
	// Meta is the call's _meta.
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// PermissionServer is an MCP server, written with the official Go SDK, with
// one tool for Claude Code's --permission-prompt-tool: it records each call
// and answers with a fixed PermissionReply. It serves over stdio (as this
// test binary, started by Claude Code; see Main) or over streamable HTTP.
type PermissionServer struct {
	dir string // holds reply.json and calls/
}

// NewPermissionServer prepares a server answering with reply.
func NewPermissionServer(t testing.TB, reply PermissionReply) *PermissionServer {
	t.Helper()
	dir := t.TempDir()
	agenttest.WriteJSONFile(t, filepath.Join(dir, "reply.json"), reply)
	agenttest.Mkdir(t, filepath.Join(dir, "calls"))
	return &PermissionServer{dir: dir}
}

// StdioConfig returns the MCP server configuration (an entry of
// "mcpServers") that has Claude Code start this test binary as the server
// over stdio. The test binary's TestMain must call Main. extra is merged
// into the entry (such as "alwaysLoad": true).
func (s *PermissionServer) StdioConfig(t testing.TB, extra map[string]any) map[string]any {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{"type": "stdio", "command": exe, "args": []string{}, "env": map[string]string{dirEnv: s.dir}}
	for k, v := range extra {
		cfg[k] = v
	}
	return cfg
}

// HTTPConfig starts the server over streamable HTTP on loopback (until the
// test ends) and returns its MCP server configuration. extra is merged into
// it. wrap, if not nil, wraps the HTTP handler.
func (s *PermissionServer) HTTPConfig(t testing.TB, extra map[string]any, wrap func(http.Handler) http.Handler) map[string]any {
	t.Helper()
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.server(nil) }, nil)
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cfg := map[string]any{"type": "http", "url": srv.URL + "/mcp"}
	for k, v := range extra {
		cfg[k] = v
	}
	return cfg
}

// MCPServers returns an MCP configuration (for Options.MCPConfig) holding
// one server, cfg, named name: a PermissionServer's config, or
// {"type": "http", "url": …} for any streamable HTTP server.
func MCPServers(name string, cfg map[string]any) map[string]any {
	return map[string]any{"mcpServers": map[string]any{name: cfg}}
}

// PermissionPromptArgs returns the arguments that make tool of the MCP
// server named server answer Claude Code's permission prompts.
func PermissionPromptArgs(server, tool string) []string {
	return []string{"--permission-prompt-tool", "mcp__" + server + "__" + tool}
}

// Calls returns the calls of the tool so far, in order.
func (s *PermissionServer) Calls(t testing.TB) []PermissionCall {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(s.dir, "calls"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var calls []PermissionCall
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(s.dir, "calls", name))
		if err != nil {
			t.Fatal(err)
		}
		var c PermissionCall
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		calls = append(calls, c)
	}
	return calls
}

// Main, called first in a test binary's TestMain, serves a PermissionServer
// over stdio and exits when this process was started as one by Claude Code;
// otherwise it returns at once.
func Main() {
	dir := os.Getenv(dirEnv)
	if dir == "" {
		return
	}
	s := &PermissionServer{dir: dir}
	crash := func() { os.Exit(3) }
	if err := s.server(crash).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "claudetest permission server:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// callSeq orders the calls recorded within one process.
var callSeq atomic.Int64

// server returns the MCP server; crash, if not nil, is how a Crash reply
// ends the process.
func (s *PermissionServer) server(crash func()) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "claudetest-permissions", Version: Version}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{},
	})
	srv.AddTool(&mcp.Tool{
		Name:        PermissionToolName,
		Description: "Decides whether Claude Code may run a tool call (a permission prompt tool for tests).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"tool_name":{"type":"string"},"input":{"type":"object"},"tool_use_id":{"type":"string"}},"required":["tool_name","input"]}`),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return s.call(req, crash)
	})
	return srv
}

// call records one call and answers it as reply.json says.
func (s *PermissionServer) call(req *mcp.CallToolRequest, crash func()) (*mcp.CallToolResult, error) {
	meta, _ := json.Marshal(req.Params.Meta)
	if string(meta) == "null" {
		meta = nil
	}
	rec, _ := json.Marshal(PermissionCall{Arguments: req.Params.Arguments, Meta: meta})
	name := fmt.Sprintf("%020d-%d-%06d.json", time.Now().UnixNano(), os.Getpid(), callSeq.Add(1))
	path := filepath.Join(s.dir, "calls", name)
	if err := os.WriteFile(path+".tmp", rec, 0o644); err != nil {
		return nil, err
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(s.dir, "reply.json"))
	if err != nil {
		return nil, err
	}
	var reply PermissionReply
	if err := json.Unmarshal(b, &reply); err != nil {
		return nil, err
	}
	if reply.Crash {
		if crash != nil {
			crash()
		}
		return nil, fmt.Errorf("the permission server crashed (as the test asked)")
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: reply.Text}}, IsError: reply.IsError}, nil
}
