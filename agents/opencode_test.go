package agents

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl/tools"
)

// pluginMessage is what hitl's plugin sends hitl hook opencode for the
// call OpenCode gave it (a testdata/opencode fixture): input's tool,
// sessionID and callID, the plugin's directory as cwd, output's args.
func pluginMessage(t *testing.T, name, cwd string) []byte {
	t.Helper()
	var given struct {
		Input struct {
			Tool      string `json:"tool"`
			SessionID string `json:"sessionID"`
			CallID    string `json:"callID"`
		} `json:"input"`
		Output struct {
			Args json.RawMessage `json:"args"`
		} `json:"output"`
	}
	if err := json.Unmarshal(fixture(t, "opencode", name), &given); err != nil {
		t.Fatal(err)
	}
	return marshal(map[string]any{"tool": given.Input.Tool, "sessionID": given.Input.SessionID, "callID": given.Input.CallID, "cwd": cwd, "args": given.Output.Args})
}

// OpenCode's calls, as OpenCode 1.18.33 gave them to a plugin
// (testdata/opencode), read into a ToolCall with their kind.
func TestOpenCodeToolCall(t *testing.T) {
	t.Parallel()
	cases := []struct {
		fixture, tool string
		kind, input   string
	}{
		{"tool-execute-before-bash.json", "bash", "shell", `{"command":"echo hi > out.txt","cwd":"/work"}`},
		{"tool-execute-before-write.json", "write", "file.write", `{"path":"/work/out.txt","content":"from the model\n"}`},
		{"tool-execute-before-edit.json", "edit", "file.edit", `{"path":"/work/out.txt","old":"old line","new":"from the model"}`},
		{"tool-execute-before-read.json", "read", "file.read", `{"path":"/work/out.txt"}`},
		{"tool-execute-before-mcp.json", "notes_note", "mcp", `{"server":"notes","tool":"note","args":{"text":"from the model"}}`},
	}
	for _, tc := range cases {
		call, err := OpenCode.ToolCall(pluginMessage(t, tc.fixture, "/work"))
		if err != nil {
			t.Fatalf("%s: %v", tc.fixture, err)
		}
		if call.Agent != "OpenCode" || call.Tool != tc.tool || call.ToolUseID != "call_00" || call.SessionID != "ses_0" ||
			call.Cwd != "/work" || call.Via != "tool.execute.before plugin" || call.CallKey != "" {
			t.Errorf("%s: %+v", tc.fixture, call)
		}
		if call.Kind != tc.kind || !sameJSON(t, call.KindInput, tc.input) {
			t.Errorf("%s: kind %q %s, want %q %s", tc.fixture, call.Kind, call.KindInput, tc.kind, tc.input)
		}
	}
}

func TestOpenCodeKind(t *testing.T) {
	t.Parallel()
	cases := []struct {
		tool, args  string
		kind, input string
	}{
		{"bash", `{"command":"make","workdir":"sub"}`, "shell", `{"command":"make","cwd":"/w/sub"}`},
		{"webfetch", `{"url":"https://example.com/a","format":"text"}`, "web.fetch", `{"url":"https://example.com/a"}`},
		// Every occurrence replaced is not one edit.
		{"edit", `{"filePath":"a.go","oldString":"a","newString":"b","replaceAll":true}`, "", ""},
		{"github_create_issue", `{"title":"t"}`, "", ""},
		{"github_list", `{}`, "mcp", `{"server":"github","tool":"list","args":{}}`},
		{"todowrite", `{}`, "", ""},
		{"glob", `{"pattern":"*.go"}`, "", ""},
	}
	for _, tc := range cases {
		var fields map[string]json.RawMessage
		json.Unmarshal([]byte(tc.args), &fields)
		kind, got := openCodeKind(tc.tool, json.RawMessage(tc.args), fields, "/w")
		if kind != tc.kind || tc.kind != "" && !sameJSON(t, got, tc.input) {
			t.Errorf("%s %s: kind %q %s, want %q %s", tc.tool, tc.args, kind, got, tc.kind, tc.input)
		}
	}
}

func TestOpenCodeOutput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		v    *tools.Verdict
		want string
	}{
		{"allow", &tools.Verdict{Allow: true, Reason: "Approved in hitl by alice."}, `{"decision":"allow"}`},
		{"edit", &tools.Verdict{Allow: true, UpdatedInput: json.RawMessage(`{"command":"ls"}`)}, `{"decision":"allow","args":{"command":"ls"}}`},
		{"deny", &tools.Verdict{Reason: "no"}, `{"decision":"deny","reason":"no"}`},
		{"failed, on error ask", &tools.Verdict{Failed: true, Reason: "hitl could not get a decision"}, `{"decision":"deny","reason":"hitl could not get a decision"}`},
		{"bad edit", &tools.Verdict{Allow: true, UpdatedInput: json.RawMessage(`[1]`)},
			`{"decision":"deny","reason":"hitl could not get a decision on this call, so it is denied: the edited input is not a JSON object."}`},
	}
	for _, tc := range cases {
		if got := OpenCode.Output(tc.v, tools.OnErrorAsk); !sameJSON(t, got, tc.want) {
			t.Errorf("%s: %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

// TestOpenCodePlugin runs the printed plugin's tool.execute.before in node
// against a stand-in for hitl: it allows only on exit 0 with an allow,
// changes args in place on an edit, and throws on everything else.
func TestOpenCodePlugin(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH")
	}
	cases := []struct {
		name, script string // the stand-in's sh script
		tool         string
		want         string // what the call did: "ran <args>", "threw <message>"
	}{
		{"allow", `cat >/dev/null; echo '{"decision":"allow"}'`, "bash", `ran {"command":"ls"}`},
		{"edit", `cat >/dev/null; echo '{"decision":"allow","args":{"command":"pwd"}}'`, "bash", `ran {"command":"pwd"}`},
		{"deny", `cat >/dev/null; echo '{"decision":"deny","reason":"not here"}'`, "bash", "threw not here"},
		{"allow, exit 2", `cat >/dev/null; echo '{"decision":"allow"}'; exit 2`, "bash", "threw Denied in hitl."},
		{"garbage", `cat >/dev/null; echo 'allow'`, "bash", "threw hitl could not get a decision on this bash call, so it is denied: hitl hook opencode exited 0 without a decision"},
		{"crash", `cat >/dev/null; echo 'boom' >&2; kill -KILL $$`, "bash", "threw hitl could not get a decision on this bash call, so it is denied: boom"},
		{"missing", "", "bash", "threw hitl could not get a decision on this bash call, so it is denied: cannot run"},
		{"sends the call", `cat > "$0.in"; echo '{"decision":"allow"}'`, "bash", `ran {"command":"ls"}`},
		{"another tool", `exit 1`, "read", `ran {"command":"ls"}`},
	}
	for _, tc := range cases {
		dir := t.TempDir()
		hitlPath := filepath.Join(dir, "hitl")
		if tc.script != "" {
			if err := os.WriteFile(hitlPath, []byte("#!/bin/sh\n"+tc.script+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		plugin := filepath.Join(dir, "hitl.mjs")
		if err := os.WriteFile(plugin, []byte(OpenCodePlugin(hitlPath, []string{"hook", "opencode"}, OpenCodeMatcher, time.Minute)), 0o644); err != nil {
			t.Fatal(err)
		}
		driver := `const { Hitl } = await import(process.argv[1]);
const hooks = await Hitl({ directory: "/work" });
const output = { args: { command: "ls" } };
const args = output.args;
try {
  await hooks["tool.execute.before"]({ tool: process.argv[2], sessionID: "ses_1", callID: "call_1" }, output);
  console.log("ran " + JSON.stringify(output.args) + (output.args === args ? "" : " (another object)"));
} catch (e) {
  console.log("threw " + e.message);
}`
		out, err := exec.Command("node", "--input-type=module", "-e", driver, plugin, tc.tool).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: node: %v\n%s", tc.name, err, out)
		}
		if got := strings.TrimSpace(string(out)); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: %s\nwant %s…", tc.name, got, tc.want)
		}
		if tc.name == "sends the call" {
			sent, _ := os.ReadFile(hitlPath + ".in")
			want := `{"tool":"bash","sessionID":"ses_1","callID":"call_1","cwd":"/work","args":{"command":"ls"}}`
			if !bytes.Equal(bytes.TrimSpace(sent), []byte(want)) {
				t.Errorf("the plugin sent %s\nwant %s", sent, want)
			}
		}
	}
}
