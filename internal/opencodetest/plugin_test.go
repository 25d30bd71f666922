package opencodetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl/internal/chatfake"
)

// A plugin's tool.execute.before: what OpenCode gives it for each kind of
// tool, and what OpenCode does with what it does.

// readOut returns the content of out.txt in the run's directory, and
// whether it exists.
func readOut(t *testing.T, r *Output) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.Dir, "out.txt"))
	if os.IsNotExist(err) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b), true
}

// told returns what the model was told of call id, with the working
// directory as $CWD; ok is false when it was told nothing.
func told(api *chatfake.API, r *Output, id string) (string, bool) {
	content, ok := api.ToolResult(id)
	return strings.ReplaceAll(content, r.Dir, "$CWD"), ok
}

// checkExit checks that opencode run ended normally.
func checkExit(t *testing.T, r *Output) {
	t.Helper()
	if r.ExitCode != 0 || r.SessionID() == "" {
		t.Fatalf("opencode exited %d; stdout %s", r.ExitCode, r.Stdout)
	}
}

// onlyInput returns what the plugin was given, failing the test if it
// ran another number of times.
func onlyInput(t *testing.T, p *RecordingPlugin) (input map[string]any, raw []byte) {
	t.Helper()
	inputs := p.Inputs(t)
	if len(inputs) != 1 {
		t.Fatalf("the plugin ran %d times; want 1", len(inputs))
	}
	var m map[string]any
	if err := json.Unmarshal(inputs[0], &m); err != nil {
		t.Fatal(err)
	}
	return m, inputs[0]
}

func TestToolExecuteBefore(t *testing.T) {
	const ran = "(no output)"
	cases := []struct {
		name  string
		reply PluginReply
		// wantOut is out.txt's content, "" for none (the command did not
		// run); wantTold is what the model is told.
		wantOut, wantTold string
	}{
		{name: "nothing", wantOut: "hi\n", wantTold: ran},
		{name: "throw", reply: PluginReply{Throw: "denied by the test: no writing here"}, wantTold: "denied by the test: no writing here"},
		{name: "args changed in place", reply: PluginReply{Args: map[string]any{"command": "echo changed > out.txt", "description": "changed"}},
			wantOut: "changed\n", wantTold: ran},
		// A new object assigned to output.args is not what runs.
		{name: "args assigned", reply: PluginReply{Args: map[string]any{"command": "echo changed > out.txt", "description": "changed"}, Assign: true},
			wantOut: "hi\n", wantTold: ran},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := NewAPI(t, Bash("echo hi > out.txt"), chatfake.Text("finished"))
			p := NewRecordingPlugin(t, tc.reply)
			r := Run(t, Options{API: api, Prompt: "write hi", Plugins: map[string]string{"rec.js": p.Source}})
			checkExit(t, r)
			in, raw := onlyInput(t, p)
			if got := in["input"].(map[string]any); got["tool"] != "bash" || got["callID"] != chatfake.CallID(0) || got["sessionID"] != r.SessionID() {
				t.Errorf("input %v; want bash, call_00 and the run's session %s", got, r.SessionID())
			}
			if out, _ := readOut(t, r); out != tc.wantOut {
				t.Errorf("out.txt = %q; want %q", out, tc.wantOut)
			}
			if got, _ := told(api, r, chatfake.CallID(0)); got != tc.wantTold {
				t.Errorf("the model was told %q; want %q", got, tc.wantTold)
			}
			if tc.name == "nothing" {
				checkFixture(t, r, "tool-execute-before-bash.json", raw)
			}
		})
	}
}

func TestToolExecuteBeforeTools(t *testing.T) {
	cases := []struct {
		name     string
		call     chatfake.Turn
		reply    PluginReply
		fixture  string
		wantOut  string // out.txt, which starts as "old line\n"
		wantTold string // held by what the model is told
		wantMCP  string // the MCP server's calls
	}{
		{name: "write", call: chatfake.Call("write", map[string]any{"filePath": "out.txt", "content": "from the model\n"}),
			fixture: "tool-execute-before-write.json", wantOut: "from the model\n", wantTold: "Wrote file successfully."},
		{name: "edit", call: chatfake.Call("edit", map[string]any{"filePath": "out.txt", "oldString": "old line", "newString": "from the model"}),
			fixture: "tool-execute-before-edit.json", wantOut: "from the model\n", wantTold: "Edit applied successfully."},
		{name: "read", call: chatfake.Call("read", map[string]any{"filePath": "out.txt"}),
			fixture: "tool-execute-before-read.json", wantOut: "old line\n", wantTold: "1: old line"},
		{name: "mcp", call: chatfake.Call("notes_note", map[string]any{"text": "from the model"}),
			fixture: "tool-execute-before-mcp.json", wantOut: "old line\n", wantTold: "noted: from the model", wantMCP: `[{"text":"from the model"}]`},
		{name: "mcp, args changed", call: chatfake.Call("notes_note", map[string]any{"text": "from the model"}), reply: PluginReply{Args: map[string]any{"text": "from the plugin"}},
			wantOut: "old line\n", wantTold: "noted: from the plugin", wantMCP: `[{"text":"from the plugin"}]`},
		{name: "mcp, throw", call: chatfake.Call("notes_note", map[string]any{"text": "from the model"}), reply: PluginReply{Throw: "no"},
			wantOut: "old line\n", wantTold: "no", wantMCP: `[]`},
		{name: "write, args changed", call: chatfake.Call("write", map[string]any{"filePath": "out.txt", "content": "from the model\n"}),
			reply: PluginReply{Args: map[string]any{"filePath": "out.txt", "content": "from the plugin\n"}}, wantOut: "from the plugin\n", wantTold: "Wrote file successfully."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := NewMCPServer(t)
			api := NewAPI(t, tc.call, chatfake.Text("finished"))
			p := NewRecordingPlugin(t, tc.reply)
			r := Run(t, Options{API: api, Prompt: "do it", Files: map[string]string{"out.txt": "old line\n"},
				Config: map[string]any{"mcp": map[string]any{"notes": srv.Config()}}, Plugins: map[string]string{"rec.js": p.Source}})
			checkExit(t, r)
			_, raw := onlyInput(t, p)
			if out, _ := readOut(t, r); out != tc.wantOut {
				t.Errorf("out.txt = %q; want %q", out, tc.wantOut)
			}
			if got, _ := told(api, r, chatfake.CallID(0)); !strings.Contains(got, tc.wantTold) {
				t.Errorf("the model was told %q; want it to hold %q", got, tc.wantTold)
			}
			if tc.wantMCP != "" {
				var calls []string
				for _, c := range srv.Calls() {
					calls = append(calls, string(c))
				}
				if got := "[" + strings.Join(calls, ",") + "]"; got != tc.wantMCP {
					t.Errorf("the server's calls = %s; want %s", got, tc.wantMCP)
				}
			}
			if tc.fixture != "" {
				checkFixture(t, r, tc.fixture, raw)
			}
		})
	}
}

// TestPermissions: a plugin's tool.execute.before runs before OpenCode's
// own permission check, for every call the model makes of a tool that
// exists: a throw blocks a call OpenCode allows, and a call the plugin
// lets through still meets OpenCode's "ask", which opencode run rejects
// (without telling the model) unless --auto. A tool denied outright is not
// offered, and a call of it reaches the plugin as "invalid".
func TestPermissions(t *testing.T) {
	cases := []struct {
		name       string
		permission string
		args       []string
		reply      PluginReply
		wantTool   string // what the plugin was given
		wantOut    string
		wantTold   string // "" for nothing told
		wantStderr string
	}{
		{name: "allow, throw", permission: "allow", reply: PluginReply{Throw: "no"}, wantTool: "bash", wantTold: "no"},
		{name: "ask, nothing", permission: "ask", wantTool: "bash", wantStderr: "permission requested: bash (echo hi > out.txt); auto-rejecting"},
		{name: "ask, throw", permission: "ask", reply: PluginReply{Throw: "no"}, wantTool: "bash", wantTold: "no"},
		{name: "ask, --auto", permission: "ask", args: []string{"--auto"}, wantTool: "bash", wantOut: "hi\n", wantTold: "(no output)"},
		{name: "deny", permission: "deny", wantTool: "invalid", wantTold: "Model tried to call unavailable tool 'bash'."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := NewAPI(t, Bash("echo hi > out.txt"), chatfake.Text("finished"))
			p := NewRecordingPlugin(t, tc.reply)
			r := Run(t, Options{API: api, Prompt: "write hi", Args: tc.args, Config: map[string]any{"permission": map[string]any{"bash": tc.permission}},
				Plugins: map[string]string{"rec.js": p.Source}})
			checkExit(t, r)
			in, _ := onlyInput(t, p)
			if got := in["input"].(map[string]any)["tool"]; got != tc.wantTool {
				t.Errorf("the plugin was given %v; want %s", got, tc.wantTool)
			}
			if out, _ := readOut(t, r); out != tc.wantOut {
				t.Errorf("out.txt = %q; want %q", out, tc.wantOut)
			}
			got, ok := told(api, r, chatfake.CallID(0))
			if ok != (tc.wantTold != "") || !strings.Contains(got, tc.wantTold) {
				t.Errorf("the model was told %q (%v); want %q", got, ok, tc.wantTold)
			}
			if !strings.Contains(string(r.Stderr), tc.wantStderr) {
				t.Errorf("stderr does not hold %q", tc.wantStderr)
			}
		})
	}
}
