package geminitest

import (
	"strings"
	"testing"
)

// The file tools (write_file, replace) and an MCP server's tools reach
// BeforeTool hooks with their arguments as the model gave them.

func TestBeforeToolFileTools(t *testing.T) {
	cases := []struct {
		name    string
		call    Turn
		files   map[string]string
		reply   HookReply
		fixture string // "" for none
		// wantOut is out.txt's content; wantResponse, what the model is
		// told, holds it.
		wantOut, wantResponse string
	}{
		{name: "write_file", call: Call("write_file", map[string]any{"file_path": "out.txt", "content": "from the model\n"}),
			reply: HookReply{Stdout: "{}"}, fixture: "beforetool-input-write-file.json", wantOut: "from the model\n",
			wantResponse: "Successfully created and wrote to new file: $CWD/out.txt."},
		{name: "replace", call: Call("replace", map[string]any{"file_path": "out.txt", "old_string": "old line", "new_string": "from the model", "instruction": "Change the line."}),
			files: map[string]string{"out.txt": "old line\n"}, reply: HookReply{Stdout: "{}"}, fixture: "beforetool-input-replace.json", wantOut: "from the model\n",
			wantResponse: "Successfully modified file: $CWD/out.txt (1 replacements)."},
		{name: "write_file denied", call: Call("write_file", map[string]any{"file_path": "out.txt", "content": "from the model\n"}),
			reply: HookReply{Stdout: fixture(t, "beforetool-deny.json")}, wantResponse: "Tool execution blocked: denied by the test: no writing here"},
		{name: "write_file edited", call: Call("write_file", map[string]any{"file_path": "out.txt", "content": "from the model\n"}),
			reply:   Decision(map[string]any{"hookSpecificOutput": map[string]any{"tool_input": map[string]any{"file_path": "out.txt", "content": "from the hook\n"}}}),
			wantOut: "from the hook\n", wantResponse: "[System] Tool input parameters were modified by a hook before execution."},
		// A tool_input that leaves out a required argument fails, though
		// the model's call had it: the edit is not merged over it.
		{name: "write_file edited in part", call: Call("write_file", map[string]any{"file_path": "out.txt", "content": "from the model\n"}),
			reply:        Decision(map[string]any{"hookSpecificOutput": map[string]any{"tool_input": map[string]any{"content": "from the hook\n"}}}),
			wantResponse: "Tool parameter modification by hook failed validation: params must have required property 'file_path'"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := NewAPI(t, tc.call, Text("finished"))
			hook := NewCommandHook(t, tc.reply)
			r := Run(t, Options{API: api, Prompt: "write", Files: tc.files, Settings: Hooks("BeforeTool", "^(write_file|replace)$", hook.Hook(30000))})
			checkExit(t, r)
			in := onlyInput(t, hook)
			if in["tool_name"] != tc.call.Name {
				t.Errorf("tool_name = %v; want %s", in["tool_name"], tc.call.Name)
			}
			if out, _ := readOut(t, r); out != tc.wantOut && !(tc.wantOut == "" && out == tc.files["out.txt"]) {
				t.Errorf("out.txt = %q; want %q", out, tc.wantOut)
			}
			if resp, _ := toolResponse(t, api, r, CallID(0)); !strings.Contains(resp, tc.wantResponse) {
				t.Errorf("the model was told %q; want it to hold %q", resp, tc.wantResponse)
			}
			if tc.fixture != "" {
				checkFixture(t, r, tc.fixture, hook.Inputs(t)[0])
			}
		})
	}
}

func TestBeforeToolMCP(t *testing.T) {
	cases := []struct {
		name         string
		reply        HookReply
		wantCalls    string // the server's calls, as JSON
		wantResponse string // what the model is told holds it
	}{
		{name: "no decision", reply: HookReply{Stdout: "{}"}, wantCalls: `[{"text":"from the model"}]`, wantResponse: "noted: from the model"},
		{name: "deny", reply: HookReply{Stdout: fixture(t, "beforetool-deny.json")}, wantCalls: `[]`,
			wantResponse: "Tool execution blocked: denied by the test: no writing here"},
		{name: "tool_input", reply: Decision(map[string]any{"hookSpecificOutput": map[string]any{"tool_input": map[string]any{"text": "from the hook"}}}),
			wantCalls: `[{"text":"from the hook"}]`, wantResponse: "noted: from the hook"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := NewMCPServer(t)
			api := NewAPI(t, Call("mcp_notes_note", map[string]any{"text": "from the model"}), Text("finished"))
			hook := NewCommandHook(t, tc.reply)
			settings := Hooks("BeforeTool", "^mcp_", hook.Hook(30000))
			settings["mcpServers"] = map[string]any{"notes": srv.Config()}
			r := Run(t, Options{API: api, Prompt: "note", Settings: settings})
			checkExit(t, r)
			in := onlyInput(t, hook)
			if in["tool_name"] != "mcp_notes_note" {
				t.Errorf("tool_name = %v; want mcp_notes_note", in["tool_name"])
			}
			if got := "[" + joinJSON(srv.Calls()) + "]"; got != tc.wantCalls {
				t.Errorf("the server's calls = %s; want %s", got, tc.wantCalls)
			}
			if resp, _ := toolResponse(t, api, r, CallID(0)); !strings.Contains(resp, tc.wantResponse) {
				t.Errorf("the model was told %q; want it to hold %q", resp, tc.wantResponse)
			}
			if tc.name == "no decision" {
				// The server's port differs from run to run.
				payload := strings.ReplaceAll(string(hook.Inputs(t)[0]), srv.URL, "http://127.0.0.1:$PORT/mcp")
				checkFixture(t, r, "beforetool-input-mcp.json", []byte(payload))
			}
		})
	}
}

// TestApprovalModes: headless, a tool the approval mode would ask about is
// not offered to the model at all, and so never reaches a hook; yolo
// offers every tool.
func TestApprovalModes(t *testing.T) {
	cases := []struct {
		mode      string
		wantShell bool
	}{
		{mode: "default", wantShell: false},
		{mode: "auto_edit", wantShell: false},
		{mode: "yolo", wantShell: true},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			api := NewAPI(t, shellTurns("echo hi > out.txt")...)
			hook := NewCommandHook(t, HookReply{Stdout: fixture(t, "beforetool-allow.json")})
			r := Run(t, Options{API: api, Prompt: "write hi", ApprovalMode: tc.mode, Settings: Hooks("BeforeTool", ".*", hook.Hook(30000))})
			checkExit(t, r)
			if got := offered(t, api.Requests()[0], "run_shell_command"); got != tc.wantShell {
				t.Errorf("run_shell_command offered: %v; want %v", got, tc.wantShell)
			}
			if ran := len(hook.Inputs(t)) > 0; ran != tc.wantShell {
				t.Errorf("the hook ran: %v; want %v", ran, tc.wantShell)
			}
			if _, written := readOut(t, r); written != tc.wantShell {
				t.Errorf("out.txt written: %v; want %v", written, tc.wantShell)
			}
			if !tc.wantShell {
				const want = `Tool "run_shell_command" not found.`
				if resp, _ := toolResponse(t, api, r, CallID(0)); !strings.HasPrefix(resp, want) {
					t.Errorf("the model was told %q; want %q…", resp, want)
				}
			}
		})
	}
}

// offered reports whether req offered the model the function name.
func offered(t *testing.T, req Request, name string) bool {
	t.Helper()
	body := object(t, req.Body)
	tools, _ := body["tools"].([]any)
	for _, tool := range tools {
		decls, _ := tool.(map[string]any)["functionDeclarations"].([]any)
		for _, d := range decls {
			if d.(map[string]any)["name"] == name {
				return true
			}
		}
	}
	return false
}
