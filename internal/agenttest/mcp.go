package agenttest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPToolName is the name of an MCPServer's one tool.
const MCPToolName = "note"

// MCPServer is an MCP server over streamable HTTP on loopback, written with
// the official Go SDK, with one tool, note, that records its arguments
// ({"text": …}) and answers "noted: <text>". It stands in for any MCP
// server whose calls a hook reviews.
type MCPServer struct {
	// URL is the server's endpoint.
	URL string

	mu    sync.Mutex
	calls []json.RawMessage
}

// NewMCPServer starts an MCPServer that calls itself name at version; it
// stops when the test ends.
func NewMCPServer(t testing.TB, name, version string) *MCPServer {
	t.Helper()
	s := &MCPServer{}
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: version}, nil)
	srv.AddTool(&mcp.Tool{
		Name:        MCPToolName,
		Description: "Notes a text (a tool for tests).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	}, s.note)
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	s.URL = hs.URL + "/mcp"
	return s
}

func (s *MCPServer) note(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	s.mu.Lock()
	s.calls = append(s.calls, append(json.RawMessage(nil), req.Params.Arguments...))
	s.mu.Unlock()
	var args struct {
		Text string `json:"text"`
	}
	json.Unmarshal(req.Params.Arguments, &args)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "noted: " + args.Text}}}, nil
}

// Calls returns the arguments of the tool's calls so far, in order.
func (s *MCPServer) Calls() []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]json.RawMessage(nil), s.calls...)
}
