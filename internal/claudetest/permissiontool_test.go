package claudetest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// --permission-prompt-tool mcp__<server>__<tool>: an MCP tool answers the
// questions Claude Code would ask a person.

// permissionArgs names the PermissionServer configured as "perm".
var permissionArgs = PermissionPromptArgs("perm", PermissionToolName)

// mcpConfig returns an MCP configuration with server as "perm".
func mcpConfig(server map[string]any) map[string]any { return MCPServers("perm", server) }

func TestPermissionToolCall(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			api := NewAPI(t, bashTurns("echo hi > out.txt")...)
			ps := NewPermissionServer(t, PermissionReply{Text: fixture(t, "permission-tool-allow.json")})
			cfg := ps.StdioConfig(t, nil)
			if transport == "http" {
				cfg = ps.HTTPConfig(t, nil, nil)
			}
			r := Run(t, Options{API: api, Prompt: "write hi", MCPConfig: mcpConfig(cfg), Args: permissionArgs})
			checkResult(t, r, false)
			if out, _ := readOut(t, r); out != "hi\n" {
				t.Errorf("out.txt = %q; want the command's output (the tool allowed it)", out)
			}
			calls := ps.Calls(t)
			if len(calls) != 1 {
				t.Fatalf("the permission tool was called %d times; want 1", len(calls))
			}
			var args struct {
				ToolName  string         `json:"tool_name"`
				Input     map[string]any `json:"input"`
				ToolUseID string         `json:"tool_use_id"`
			}
			var meta map[string]any
			json.Unmarshal(calls[0].Arguments, &args)
			json.Unmarshal(calls[0].Meta, &meta)
			if args.ToolName != "Bash" || args.ToolUseID != "toolu_00" || args.Input["command"] != "echo hi > out.txt" {
				t.Errorf("arguments = %s; want Bash's call toolu_00 and its input", calls[0].Arguments)
			}
			if meta["claudecode/toolUseId"] != "toolu_00" {
				t.Errorf(`_meta = %s; want "claudecode/toolUseId": "toolu_00"`, calls[0].Meta)
			}
			b, _ := json.Marshal(calls[0])
			checkFixture(t, r, "permission-tool-call-"+transport+".json", b)
		})
	}
}

func TestPermissionTool(t *testing.T) {
	t.Parallel()
	const ran = "(Bash completed with no output)"
	cases := []struct {
		name  string
		reply PermissionReply
		http  bool
		args  []string
		calls int // how often the permission tool is called
		// unlisted: a refusal missing from the result's permission_denials
		unlisted bool
		// wantOut is out.txt's content, "" for none; wantResult is the
		// tool_result the model gets.
		wantOut, wantResult string
	}{
		{name: "allow with updatedInput", reply: PermissionReply{Text: fixture(t, "permission-tool-updated-input.json")}, calls: 1, wantOut: "changed\n", wantResult: ran},
		{name: "allow without updatedInput", reply: Behavior(map[string]any{"behavior": "allow"}), calls: 1, wantOut: "hi\n", wantResult: ran},
		{name: "deny", reply: PermissionReply{Text: fixture(t, "permission-tool-deny.json")}, calls: 1, wantResult: "denied by the test: a person said no"},
		{name: "deny over HTTP", reply: PermissionReply{Text: fixture(t, "permission-tool-deny.json")}, http: true, calls: 1, wantResult: "denied by the test: a person said no"},
		// Every failure denies.
		{name: "tool error", unlisted: true, reply: PermissionReply{Text: "the tool failed", IsError: true}, calls: 1,
			wantResult: "<tool_use_error>Error calling tool (Bash): the tool failed</tool_use_error>"},
		{name: "not JSON", reply: PermissionReply{Text: "allow"}, calls: 1,
			wantResult: "The permission prompt tool returned an invalid permission result. Expected {behavior: 'allow', updatedInput?: object} or {behavior: 'deny', message: string}. updatedPermissions may hold at most 4096 updates, rules and directories in all."},
		{name: "unknown behavior", reply: Behavior(map[string]any{"behavior": "approve"}), calls: 1,
			wantResult: "The permission prompt tool returned an invalid permission result. Expected {behavior: 'allow', updatedInput?: object} or {behavior: 'deny', message: string}. updatedPermissions may hold at most 4096 updates, rules and directories in all."},
		{name: "server crash", unlisted: true, reply: PermissionReply{Crash: true}, calls: 1,
			wantResult: "<tool_use_error>Error calling tool (Bash): Connection closed</tool_use_error>"},
		{name: "protocol error over HTTP", unlisted: true, reply: PermissionReply{Crash: true}, http: true, calls: 1,
			wantResult: "<tool_use_error>Error calling tool (Bash): the permission server crashed (as the test asked)</tool_use_error>"},
		// Asked only when Claude Code would ask a person.
		{name: "mode allows", reply: PermissionReply{Text: fixture(t, "permission-tool-deny.json")}, args: []string{"--permission-mode", "acceptEdits"}, calls: 0, wantOut: "hi\n", wantResult: ran},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := NewAPI(t, bashTurns("echo hi > out.txt")...)
			ps := NewPermissionServer(t, tc.reply)
			cfg := ps.StdioConfig(t, nil)
			if tc.http {
				cfg = ps.HTTPConfig(t, nil, nil)
			}
			opts := Options{API: api, Prompt: "write hi", MCPConfig: mcpConfig(cfg), Args: append(tc.args, permissionArgs...)}
			r := Run(t, opts)
			checkResult(t, r, tc.wantOut == "" && !tc.unlisted)
			if n := len(ps.Calls(t)); n != tc.calls {
				t.Errorf("the permission tool was called %d times; want %d", n, tc.calls)
			}
			if out, _ := readOut(t, r); out != tc.wantOut {
				t.Errorf("out.txt = %q; want %q", out, tc.wantOut)
			}
			if result, isError := toolResult(t, api, r); result != tc.wantResult || isError != (tc.wantOut == "") {
				t.Errorf("tool_result = %q (is_error %v)\nwant %q", result, isError, tc.wantResult)
			}
		})
	}
}

// TestPermissionToolAndHook: with a PermissionRequest hook as well, both
// are asked at once and the first answer wins; the other call is
// cancelled.
func TestPermissionToolAndHook(t *testing.T) {
	t.Parallel()
	t.Run("the hook answers first", func(t *testing.T) {
		t.Parallel()
		api := NewAPI(t, bashTurns("echo hi > out.txt")...)
		ps := NewPermissionServer(t, PermissionReply{Text: fixture(t, "permission-tool-deny.json")})
		cancelled := make(chan bool, 1)
		cfg := ps.HTTPConfig(t, nil, func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				if bytes.Contains(body, []byte(`"tools/call"`)) {
					// Never answers: held until Claude Code cancels it.
					ok := false
					select {
					case <-r.Context().Done():
						ok = true
					case <-time.After(20 * time.Second):
					}
					select {
					case cancelled <- ok:
					default:
					}
					return
				}
				h.ServeHTTP(w, r)
			})
		})
		hook := NewCommandHook(t, HookReply{Stdout: fixture(t, "permissionrequest-allow.json")})
		r := Run(t, Options{API: api, Prompt: "write hi", MCPConfig: mcpConfig(cfg), Args: permissionArgs,
			Settings: Hooks("PermissionRequest", "Bash", hook.Hook(0))})
		checkResult(t, r, false)
		if out, _ := readOut(t, r); out != "hi\n" {
			t.Errorf("out.txt = %q; want the command's output (the hook allowed it)", out)
		}
		select {
		case ok := <-cancelled:
			if !ok {
				t.Error("the permission tool's call was not cancelled")
			}
		default:
			t.Error("the permission tool was not called")
		}
	})
	t.Run("the tool answers first", func(t *testing.T) {
		t.Parallel()
		api := NewAPI(t, bashTurns("echo hi > out.txt")...)
		ps := NewPermissionServer(t, PermissionReply{Text: fixture(t, "permission-tool-deny.json")})
		hook := NewCommandHook(t, HookReply{Hang: true})
		r := Run(t, Options{API: api, Prompt: "write hi", MCPConfig: mcpConfig(ps.StdioConfig(t, nil)), Args: permissionArgs,
			Settings: Hooks("PermissionRequest", "Bash", hook.Hook(30))})
		checkResult(t, r, true)
		if result, _ := toolResult(t, api, r); result != "denied by the test: a person said no" {
			t.Errorf("tool_result = %q; want the permission tool's message", result)
		}
		if n := len(hook.Inputs(t)); n != 1 {
			t.Errorf("the hook ran %d times; want 1", n)
		}
	})
}

// TestPermissionToolSlowServer: -p waits for MCP servers to connect before
// its first request to the model, so the permission tool is there for the
// first check with or without "alwaysLoad"; a server that does not connect
// within MCP_TIMEOUT fails the whole run, and nothing runs.
func TestPermissionToolSlowServer(t *testing.T) {
	t.Parallel()
	for _, alwaysLoad := range []bool{false, true} {
		var extra map[string]any
		name := "plain"
		if alwaysLoad {
			extra, name = map[string]any{"alwaysLoad": true}, "alwaysLoad"
		}
		t.Run(name+"/connects late", func(t *testing.T) {
			t.Parallel()
			api := NewAPI(t, bashTurns("echo hi > out.txt")...)
			ps := NewPermissionServer(t, Behavior(map[string]any{"behavior": "allow"}))
			early := make(chan bool, 1)
			cfg := ps.HTTPConfig(t, extra, func(h http.Handler) http.Handler {
				var held atomic.Bool
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if held.CompareAndSwap(false, true) {
						// Hold the first MCP request (initialize) while
						// watching for a model request that does not wait.
						select {
						case <-api.Received(1):
							early <- true
						case <-time.After(2 * time.Second):
							early <- false
						}
					}
					h.ServeHTTP(w, r)
				})
			})
			r := Run(t, Options{API: api, Prompt: "write hi", MCPConfig: mcpConfig(cfg), Args: permissionArgs})
			if <-early {
				t.Error("the first request to the model was sent while the MCP server was still connecting")
			}
			checkResult(t, r, false)
			if n := len(ps.Calls(t)); n != 1 {
				t.Errorf("the permission tool was called %d times; want 1", n)
			}
		})
		t.Run(name+"/never connects", func(t *testing.T) {
			t.Parallel()
			api := NewAPI(t, bashTurns("echo hi > out.txt")...)
			ps := NewPermissionServer(t, Behavior(map[string]any{"behavior": "allow"}))
			r := Run(t, Options{API: api, Prompt: "write hi", MCPConfig: mcpConfig(ps.StdioConfig(t, extra)), Args: permissionArgs,
				Env: []string{"MCP_TIMEOUT=1"}}) // milliseconds: the server cannot connect in time
			want := "Error: MCP tool mcp__perm__approve (passed via --permission-prompt-tool) not found. Available MCP tools: none\n"
			if r.ExitCode != 1 || string(r.Stderr) != want {
				t.Errorf("exit %d, stderr %q; want exit 1, stderr %q", r.ExitCode, r.Stderr, want)
			}
			if out, ok := readOut(t, r); ok {
				t.Errorf("out.txt = %q; want none (nothing may run)", out)
			}
			if _, _, ok := api.ToolResult("toolu_00"); ok {
				t.Error("the model got a tool_result; want the run to end at the permission check")
			}
		})
	}
}

// TestPermissionToolNotOffered: the permission tool is not among the tools
// offered to the model.
func TestPermissionToolNotOffered(t *testing.T) {
	t.Parallel()
	api := NewAPI(t, Text("nothing to do"))
	ps := NewPermissionServer(t, Behavior(map[string]any{"behavior": "allow"}))
	r := Run(t, Options{API: api, Prompt: "hello", MCPConfig: mcpConfig(ps.StdioConfig(t, nil)), Args: permissionArgs})
	checkResult(t, r, false)
	for _, req := range api.Requests() {
		if bytes.Contains(req.Body, []byte("mcp__perm__")) {
			t.Errorf("request %d names the permission tool", req.Turn)
		}
	}
}
