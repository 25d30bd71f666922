package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/internal/claudetest"
	"github.com/hitl-sh/hitl/internal/mcptest"
	"github.com/hitl-sh/hitl/internal/turns"
)

// The gate's end-to-end tests: the official TypeScript SDK's client (the
// agent, mcpgate/testdata/agent.mjs) talks to "hitl gate" in front of
// real MCP servers from the npm registry, installed by test.sh into
// mcpgate/testdata/node_modules; a person answers over hitl's HTTP API.

// requireGatePackages skips the test when the npm packages are missing,
// or fails it when HITL_TEST_REQUIRE_MCP_PACKAGES is 1 (test.sh sets it).
func requireGatePackages(t *testing.T) {
	t.Helper()
	mcptest.Require(t, "@modelcontextprotocol/sdk")
}

// fsServer is the command line of the filesystem MCP server over dir.
func fsServer(dir string) []string {
	return []string{"node", filepath.Join(mcptest.Modules(), "@modelcontextprotocol", "server-filesystem", "dist", "index.js"), dir}
}

// everythingServer is the command line of the everything MCP server.
func everythingServer() []string {
	return []string{"node", filepath.Join(mcptest.Modules(), "@modelcontextprotocol", "server-everything", "dist", "index.js"), "stdio"}
}

// tsAgent is the TypeScript SDK client (mcptest.AgentScript) driving
// "hitl gate", hitl serve's gates or hitl's own MCP server.
type tsAgent struct{ *mcptest.Agent }

// startTSAgent runs the agent against "hitl gate GATEARGS -- SERVER…",
// with extra environment variables, and waits until it is connected.
func startTSAgent(t *testing.T, env []string, gateArgs []string, server []string) *tsAgent {
	t.Helper()
	target := append([]string{hitlBin, "gate"}, gateArgs...)
	if len(server) > 0 {
		target = append(append(target, "--"), server...)
	}
	return startAgent(t, env, target...)
}

// startAgent runs the agent against target: a command line, or a URL.
func startAgent(t *testing.T, env []string, target ...string) *tsAgent {
	t.Helper()
	requireGatePackages(t)
	a, _ := mcptest.Start(t, append(cleanEnv(), env...), mcptest.AgentScript, target...)
	return &tsAgent{a}
}

// call starts a tool call.
func (a *tsAgent) call(name string, args map[string]any) int {
	return a.Send(map[string]any{"op": "call", "name": name, "args": args})
}

// callResult is a tools/call result as the agent saw it.
type callResult struct {
	Text    string
	IsError bool
}

// result waits for the tool call id's result.
func (a *tsAgent) result(id int) callResult {
	r := a.Outcome(id)
	var c callResult
	c.IsError, _ = r["isError"].(bool)
	content, _ := r["content"].([]any)
	for _, x := range content {
		if m, ok := x.(map[string]any); ok && m["type"] == "text" {
			c.Text += fmt.Sprint(m["text"])
		}
	}
	return c
}

// pendingAction waits for the one pending action named name.
func pendingAction(t *testing.T, c *client.Client, name string) *hitl.Interaction {
	t.Helper()
	var found *hitl.Interaction
	waitFor(t, "a pending action "+name, func() bool {
		list, _, err := c.List(context.Background(), hitl.ListFilter{Status: hitl.StatusPending})
		if err != nil {
			t.Fatalf("list pending: %v", err)
		}
		for _, in := range list {
			if in.Action != nil && in.Action.Name == name {
				found = in
			}
		}
		return found != nil
	})
	return found
}

// respond answers an interaction as a person.
func respond(t *testing.T, c *client.Client, id, value string) {
	t.Helper()
	if _, err := c.Respond(context.Background(), id, json.RawMessage(value)); err != nil {
		t.Fatalf("respond %s: %v", value, err)
	}
}

// TestGateFilesystem runs the TypeScript SDK's client through hitl gate
// to the filesystem server: a read passes without asking anyone; a write
// waits for a person and runs when approved, runs with the person's
// edits when edited, and never runs when rejected.
func TestGateFilesystem(t *testing.T) {
	turns.Parallel(t)
	srv := startServer(t)
	person := srv.client(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := startTSAgent(t, []string{"HITL_URL=" + srv.URL}, []string{"--progress-interval", "100ms"}, fsServer(dir))

	// The client sees the upstream's own tools, annotations and all.
	tools := a.Outcome(a.Send(map[string]any{"op": "list"}))
	var writeAnnotations map[string]any
	for _, x := range tools["tools"].([]any) {
		if m := x.(map[string]any); m["name"] == "write_file" {
			writeAnnotations, _ = m["annotations"].(map[string]any)
		}
	}
	if writeAnnotations["destructiveHint"] != true {
		t.Fatalf("write_file annotations through the gate = %v, want the upstream's destructiveHint true", writeAnnotations)
	}

	read := a.result(a.call("read_text_file", map[string]any{"path": filepath.Join(dir, "notes.txt")}))
	if read.IsError || read.Text != "hello" {
		t.Fatalf("read_text_file = %+v, want hello, passed without review", read)
	}
	if list, _, _ := person.List(context.Background(), hitl.ListFilter{}); len(list) != 0 {
		t.Fatalf("a read made %d interactions, want none", len(list))
	}

	name := "mcp__secure-filesystem-server__write_file"
	target := filepath.Join(dir, "approved.txt")
	id := a.call("write_file", map[string]any{"path": target, "content": "approved"})
	in := pendingAction(t, person, name)
	if in.Action.Kind != hitl.KindMCP || !strings.Contains(in.Action.Description, "overwrite") || !strings.Contains(in.Context, "destructive") {
		t.Errorf("the person sees kind %q, description %q, context %q; want kind mcp, the tool's description and its annotations", in.Action.Kind, in.Action.Description, in.Context)
	}
	var input struct {
		Server, Tool string
		Args         map[string]any
	}
	if err := json.Unmarshal(in.Action.Input, &input); err != nil || input.Server != "secure-filesystem-server" || input.Tool != "write_file" || input.Args["path"] != target {
		t.Errorf("action input = %s, want the server, tool and args", in.Action.Input)
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatal("the write ran before anyone approved it")
	}
	a.Await(func(m map[string]any) bool { return m["event"] == "progress" && m["id"] == float64(id) })
	respond(t, person, in.ID, `{"decision": "approve"}`)
	if r := a.result(id); r.IsError {
		t.Fatalf("approved write_file = %+v, want success", r)
	}
	if b, _ := os.ReadFile(target); string(b) != "approved" {
		t.Fatalf("approved file holds %q, want approved", b)
	}

	edited := filepath.Join(dir, "edited.txt")
	id = a.call("write_file", map[string]any{"path": edited, "content": "as the model wrote it"})
	in = pendingAction(t, person, name)
	respond(t, person, in.ID, fmt.Sprintf(`{"decision": "edit", "args": {"path": %q, "content": "as the person wrote it"}}`, edited))
	if r := a.result(id); r.IsError {
		t.Fatalf("edited write_file = %+v, want success", r)
	}
	if b, _ := os.ReadFile(edited); string(b) != "as the person wrote it" {
		t.Fatalf("edited file holds %q, want the person's content", b)
	}

	rejected := filepath.Join(dir, "rejected.txt")
	id = a.call("write_file", map[string]any{"path": rejected, "content": "no"})
	in = pendingAction(t, person, name)
	respond(t, person, in.ID, `{"decision": "reject", "message": "not in this directory"}`)
	r := a.result(id)
	if !r.IsError || !strings.Contains(r.Text, "not in this directory") {
		t.Fatalf("rejected write_file = %+v, want an error result with the person's reason", r)
	}
	if _, err := os.Stat(rejected); err == nil {
		t.Fatal("a rejected write ran")
	}
}

// TestGateServe serves the filesystem server gated at /mcp/gate/fs of
// hitl serve, and drives it with the TypeScript SDK's Streamable HTTP
// client: a read passes, a write waits for a person's approval. The same
// server named in a --gate-config file, whose gate lets writes pass, is
// served beside it at /mcp/gate/files.
func TestGateServe(t *testing.T) {
	turns.Parallel(t)
	requireGatePackages(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	spec := "fs=" + strings.Join(fsServer(dir), " ")
	argv := fsServer(dir)
	config, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"files": map[string]any{"command": argv[0], "args": argv[1:], "env": map[string]string{"HITL_TEST_GATE": "1"}, "pass": []string{"write_*"}},
	}})
	configFile := filepath.Join(t.TempDir(), "gates.json")
	if err := os.WriteFile(configFile, config, 0o600); err != nil {
		t.Fatal(err)
	}
	s := &hitlServer{proc: start(t, "serve", "--addr", addr, "--db", filepath.Join(t.TempDir(), "hitl.db"), "--gate", spec, "--gate-config", configFile), URL: "http://" + addr}
	waitFor(t, "hitl serve to answer /healthz", func() bool {
		resp, err := http.Get(s.URL + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	person := s.client(t)
	a := startAgent(t, nil, s.URL+"/mcp/gate/fs")
	a.Outcome(a.Send(map[string]any{"op": "list"}))
	if r := a.result(a.call("read_text_file", map[string]any{"path": filepath.Join(dir, "notes.txt")})); r.IsError || r.Text != "hello" {
		t.Fatalf("read_text_file = %+v, want hello", r)
	}
	target := filepath.Join(dir, "out.txt")
	id := a.call("write_file", map[string]any{"path": target, "content": "served"})
	in := pendingAction(t, person, "mcp__fs__write_file")
	respond(t, person, in.ID, `{"decision": "approve"}`)
	if r := a.result(id); r.IsError {
		t.Fatalf("approved write_file = %+v, want success", r)
	}
	if b, _ := os.ReadFile(target); string(b) != "served" {
		t.Fatalf("file holds %q, want served", b)
	}
	// The configuration file's server: its gate lets writes pass.
	files := startAgent(t, nil, s.URL+"/mcp/gate/files")
	passed := filepath.Join(dir, "passed.txt")
	if r := files.result(files.call("write_file", map[string]any{"path": passed, "content": "passed"})); r.IsError {
		t.Fatalf("write_file through the configured gate = %+v, want success without review", r)
	}
	if b, _ := os.ReadFile(passed); string(b) != "passed" {
		t.Fatalf("file holds %q, want passed", b)
	}
	if list, _, err := person.List(context.Background(), hitl.ListFilter{Status: hitl.StatusPending}); err != nil || len(list) != 0 {
		t.Errorf("%d questions pending (%v) after a write the configured gate lets pass; want none", len(list), err)
	}
	if _, _, code := hitlRun(t, "serve", "--gate", "bad name=x"); code != 2 {
		t.Errorf("hitl serve --gate 'bad name=x' exited %d, want 2", code)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"mcpServers": {"fs": {"command": "x", "reveiw": ["*"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := hitlRun(t, "serve", "--gate-config", bad); code != 2 || !strings.Contains(stderr, "reveiw") {
		t.Errorf("hitl serve with a misspelt gate configuration exited %d (%s), want 2 naming the key", code, stderr)
	}
}

// TestGateUpstreamEverything fronts the everything server over
// Streamable HTTP (hitl gate --upstream) for a client that cannot elicit:
// the server's elicitation becomes a form in hitl, and the person's
// values reach it; a read-only tool named by --review waits for a person,
// and its progress notifications reach the client.
func TestGateUpstreamEverything(t *testing.T) {
	turns.Parallel(t)
	requireGatePackages(t)
	srv := startServer(t)
	person := srv.client(t)
	addr := freeAddr(t)
	port := addr[strings.LastIndex(addr, ":")+1:]
	up := exec.Command(everythingServer()[0], append(everythingServer()[1:len(everythingServer())-1], "streamableHttp")...)
	up.Env = append(cleanEnv(), "PORT="+port)
	upErr := &syncBuffer{}
	up.Stderr = upErr
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Process.Kill(); up.Wait() })
	waitFor(t, "the everything server to listen", func() bool { return strings.Contains(upErr.String(), "listening") })

	a := startTSAgent(t, []string{"HITL_URL=" + srv.URL}, []string{"--upstream", "http://" + addr + "/mcp", "--progress-interval", "100ms", "--review", "trigger-long-*"}, nil)
	tools := a.Outcome(a.Send(map[string]any{"op": "list"}))
	names := map[string]map[string]any{}
	for _, x := range tools["tools"].([]any) {
		m := x.(map[string]any)
		ann, _ := m["annotations"].(map[string]any)
		names[m["name"].(string)] = ann
	}
	if names["echo"]["readOnlyHint"] != true {
		t.Fatalf("echo's annotations through the gate = %v, want readOnlyHint", names["echo"])
	}
	if _, ok := names["trigger-elicitation-request"]; !ok {
		t.Fatalf("tools %v lack trigger-elicitation-request: the gate did not declare elicitation for a client without it", tools)
	}
	if r := a.result(a.call("echo", map[string]any{"message": "hi"})); r.IsError || !strings.Contains(r.Text, "hi") {
		t.Fatalf("echo = %+v, want it to pass", r)
	}

	id := a.call("trigger-elicitation-request", nil)
	in := pendingAction(t, person, "mcp__mcp-servers/everything__trigger-elicitation-request")
	respond(t, person, in.ID, `{"decision": "approve"}`)
	var form *hitl.Interaction
	waitFor(t, "the elicitation as a form", func() bool {
		list, _, _ := person.List(context.Background(), hitl.ListFilter{Status: hitl.StatusPending})
		for _, x := range list {
			if x.Type == hitl.TypeForm {
				form = x
			}
		}
		return form != nil
	})
	respond(t, person, form.ID, `{"name": "Ada Lovelace", "check": true}`)
	r := a.result(id)
	if r.IsError || !strings.Contains(r.Text, "Ada Lovelace") {
		t.Fatalf("elicitation result = %+v, want the person's values", r)
	}

	id = a.call("trigger-long-running-operation", map[string]any{"duration": 1, "steps": 3})
	in = pendingAction(t, person, "mcp__mcp-servers/everything__trigger-long-running-operation")
	respond(t, person, in.ID, `{"decision": "approve"}`)
	if r := a.result(id); r.IsError {
		t.Fatalf("long-running operation = %+v, want success", r)
	}
	a.Await(func(m map[string]any) bool {
		p, _ := m["progress"].(map[string]any)
		return m["event"] == "progress" && m["id"] == float64(id) && p["total"] == float64(3)
	})
}

// TestClaudeCodeThroughGate runs the real Claude Code CLI with the
// filesystem server behind hitl gate in its .mcp.json: the model's
// write_file waits for a person, runs when approved, and comes back to
// the model as an error with the person's reason when rejected.
func TestClaudeCodeThroughGate(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	requireGatePackages(t)
	for _, tc := range []struct {
		name, answer string
		wrote        bool
		want         string
	}{
		{"approve", `"approve"`, true, "Successfully wrote to"},
		{"reject", `{"decision": "reject", "message": "not this file"}`, false, "rejected it: not this file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			turns.Parallel(t)
			h := startClaudeHitl(t)
			// The server works in the directory Claude Code gives it as its
			// root: the run's scratch directory.
			api := claudetest.NewAPI(t, claudetest.ToolUse("mcp__fs__write_file", map[string]any{"path": "out.txt", "content": "hi"}), claudetest.Text("done"))
			servers := claudetest.MCPServers("fs", map[string]any{"type": "stdio", "command": hitlBin,
				"args": append([]string{"gate", "--name", "fs", "--"}, fsServer(".")...),
				"env":  map[string]string{"HITL_URL": h.URL, "HITL_TOKEN": h.agentToken}})
			p := claudetest.Start(t, claudetest.Options{API: api, Prompt: "write hi", MCPConfig: servers,
				Args: []string{"--allowedTools", "mcp__fs__write_file"}, Env: h.env()})
			in := h.answer(t, tc.answer)
			r := p.Wait()
			if in.Action == nil || in.Action.Name != "mcp__fs__write_file" || in.Action.Kind != hitl.KindMCP || in.SourceAgent != "claude-code" {
				t.Errorf("asked %+v from %q, want the action mcp__fs__write_file of kind mcp from claude-code", in.Action, in.SourceAgent)
			}
			got, isErr, ok := api.ToolResult("toolu_00")
			if !ok || !strings.Contains(got, tc.want) || isErr == tc.wrote {
				t.Errorf("tool_result %q (error %v), want %q, error %v; claude stdout %s", got, isErr, tc.want, !tc.wrote, r.Stdout)
			}
			if _, wrote := readFile(t, r, "out.txt"); wrote != tc.wrote {
				t.Errorf("out.txt exists: %v, want %v", wrote, tc.wrote)
			}
		})
	}
}
