package copilottest

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl/internal/chatfake"
)

// The file tools (create, edit, view) and an MCP server's tools reach
// preToolUse hooks with their arguments as the model gave them.

func TestPreToolUseFileTools(t *testing.T) {
	cases := []struct {
		name    string
		call    func(dir string) chatfake.Turn
		files   map[string]string
		reply   HookReply
		fixture string // "" for none
		// wantOut is out.txt's content; wantTold, what the model is told,
		// holds it.
		wantOut, wantTold string
	}{
		{name: "create", call: func(dir string) chatfake.Turn {
			return chatfake.Call("create", map[string]any{"path": filepath.Join(dir, "out.txt"), "file_text": "from the model\n"})
		}, reply: HookReply{Stdout: "{}"}, fixture: "pretooluse-input-create.json", wantOut: "from the model\n", wantTold: "Created file $CWD/out.txt with 15 characters"},
		// A relative path is sent as the model gave it, and is the working
		// directory's.
		{name: "create, relative", call: func(string) chatfake.Turn {
			return chatfake.Call("create", map[string]any{"path": "out.txt", "file_text": "from the model\n"})
		}, reply: HookReply{Stdout: "{}"}, wantOut: "from the model\n", wantTold: "Created file $CWD/out.txt"},
		{name: "edit", call: func(dir string) chatfake.Turn {
			return chatfake.Call("edit", map[string]any{"path": filepath.Join(dir, "out.txt"), "old_str": "old line", "new_str": "from the model"})
		}, files: map[string]string{"out.txt": "old line\n"}, reply: HookReply{Stdout: "{}"}, fixture: "pretooluse-input-edit.json",
			wantOut: "from the model\n", wantTold: "File $CWD/out.txt updated with changes."},
		{name: "view", call: func(dir string) chatfake.Turn {
			return chatfake.Call("view", map[string]any{"path": filepath.Join(dir, "out.txt")})
		}, files: map[string]string{"out.txt": "old line\n"}, reply: HookReply{Stdout: "{}"}, fixture: "pretooluse-input-view.json",
			wantOut: "old line\n", wantTold: "old line"},
		{name: "create denied", call: func(dir string) chatfake.Turn {
			return chatfake.Call("create", map[string]any{"path": filepath.Join(dir, "out.txt"), "file_text": "from the model\n"})
		}, reply: HookReply{Stdout: fixture(t, "pretooluse-deny.json")}, wantTold: "Denied by preToolUse hook: denied by the test: no writing here"},
		{name: "create edited", call: func(dir string) chatfake.Turn {
			return chatfake.Call("create", map[string]any{"path": filepath.Join(dir, "out.txt"), "file_text": "from the model\n"})
		}, reply: Decision(map[string]any{"permissionDecision": "allow", "modifiedArgs": map[string]any{"path": "out.txt", "file_text": "from the hook\n"}}),
			wantOut: "from the hook\n", wantTold: "Created file $CWD/out.txt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "work")
			api := NewAPI(t, tc.call(dir), chatfake.Text("finished"))
			hook := NewCommandHook(t, tc.reply)
			r := Run(t, Options{API: api, Prompt: "write", Dir: dir, Files: tc.files, Settings: Hooks("preToolUse", "create|edit|view", hook.Hook(30))})
			checkExit(t, r)
			in := onlyInput(t, hook)
			if in["toolName"] != tc.call(dir).Name {
				t.Errorf("toolName = %v; want %s", in["toolName"], tc.call(dir).Name)
			}
			if out, _ := readOut(t, r); out != tc.wantOut {
				t.Errorf("out.txt = %q; want %q", out, tc.wantOut)
			}
			if told := toolResult(t, api, r, chatfake.CallID(0)); !strings.Contains(told, tc.wantTold) {
				t.Errorf("the model was told %q; want it to hold %q", told, tc.wantTold)
			}
			if tc.fixture != "" {
				checkFixture(t, r, tc.fixture, hook.Inputs(t)[0])
			}
		})
	}
}

func TestPreToolUseMCP(t *testing.T) {
	cases := []struct {
		name      string
		reply     HookReply
		wantCalls string // the server's calls, as JSON
		wantTold  string // what the model is told holds it
	}{
		{name: "no decision", reply: HookReply{Stdout: "{}"}, wantCalls: `[{"text":"from the model"}]`, wantTold: "noted: from the model"},
		{name: "deny", reply: HookReply{Stdout: fixture(t, "pretooluse-deny.json")}, wantCalls: `[]`,
			wantTold: "Denied by preToolUse hook: denied by the test: no writing here"},
		{name: "modifiedArgs", reply: Decision(map[string]any{"permissionDecision": "allow", "modifiedArgs": map[string]any{"text": "from the hook"}}),
			wantCalls: `[{"text":"from the hook"}]`, wantTold: "noted: from the hook"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := NewMCPServer(t)
			api := NewAPI(t, chatfake.Call("notes-note", map[string]any{"text": "from the model"}), chatfake.Text("finished"))
			hook := NewCommandHook(t, tc.reply)
			r := Run(t, Options{API: api, Prompt: "note", MCPServers: map[string]any{"notes": srv.Config()}, Settings: Hooks("preToolUse", "notes-.*", hook.Hook(30))})
			checkExit(t, r)
			if !chatfake.Offered(api.Requests()[0], "notes-note") {
				t.Errorf("tools offered: %v; want notes-note", chatfake.ToolNames(api.Requests()[0]))
			}
			in := onlyInput(t, hook)
			if in["toolName"] != "notes-note" {
				t.Errorf("toolName = %v; want notes-note", in["toolName"])
			}
			if got := "[" + joinJSON(srv.Calls()) + "]"; got != tc.wantCalls {
				t.Errorf("the server's calls = %s; want %s", got, tc.wantCalls)
			}
			if told := toolResult(t, api, r, chatfake.CallID(0)); !strings.Contains(told, tc.wantTold) {
				t.Errorf("the model was told %q; want it to hold %q", told, tc.wantTold)
			}
			if tc.name == "no decision" {
				checkFixture(t, r, "pretooluse-input-mcp.json", hook.Inputs(t)[0])
			}
		})
	}
}
