package agents

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl/tools"
)

// Gemini CLI's hook input, as Gemini CLI 0.61.0 sent it
// (testdata/gemini-cli), read into a ToolCall with its kind.
func TestGeminiToolCall(t *testing.T) {
	t.Parallel()
	cases := []struct {
		fixture, tool string
		kind, input   string
		reason        string
	}{
		{"beforetool-input-shell.json", "run_shell_command",
			"shell", `{"command":"echo hi > out.txt","cwd":"$CWD"}`, ""},
		{"beforetool-input-write-file.json", "write_file",
			"file.write", `{"path":"$CWD/out.txt","content":"from the model\n"}`, ""},
		{"beforetool-input-replace.json", "replace",
			"file.edit", `{"path":"$CWD/out.txt","old":"old line","new":"from the model"}`, "Change the line."},
		{"beforetool-input-mcp.json", "mcp_notes_note",
			"mcp", `{"server":"notes","tool":"note","args":{"text":"from the model"}}`, ""},
	}
	for _, tc := range cases {
		data := fixture(t, "gemini-cli", tc.fixture)
		call, err := Gemini.ToolCall(data)
		if err != nil {
			t.Fatalf("%s: %v", tc.fixture, err)
		}
		var raw struct {
			ToolInput json.RawMessage `json:"tool_input"`
		}
		json.Unmarshal(data, &raw)
		if call.Agent != "Gemini CLI" || call.Tool != tc.tool || call.ToolUseID != "" || call.SessionID != "00000000-0000-0000-0000-000000000000" ||
			call.Cwd != "$CWD" || call.Via != "BeforeTool hook" || call.Reason != tc.reason {
			t.Errorf("%s: %+v", tc.fixture, call)
		}
		if !sameJSON(t, call.Input, string(raw.ToolInput)) {
			t.Errorf("%s: input %s, want tool_input %s as it is", tc.fixture, call.Input, raw.ToolInput)
		}
		if call.Kind != tc.kind || !sameJSON(t, call.KindInput, tc.input) {
			t.Errorf("%s: kind %q %s, want %q %s", tc.fixture, call.Kind, call.KindInput, tc.kind, tc.input)
		}
		if !strings.HasPrefix(call.CallKey, tc.tool+":sha256:") {
			t.Errorf("%s: call key %q, want the tool and a hash of its input", tc.fixture, call.CallKey)
		}
	}
}

// TestGeminiCallKey: Gemini CLI gives no call id; the same tool with the
// same input has the same key, another input another.
func TestGeminiCallKey(t *testing.T) {
	t.Parallel()
	a := tools.InputKey("run_shell_command", json.RawMessage(`{"command": "ls"}`))
	if b := tools.InputKey("run_shell_command", json.RawMessage(`{"command":"ls"}`)); a != b {
		t.Errorf("the same call: %q, then %q", a, b)
	}
	for _, other := range []string{
		tools.InputKey("run_shell_command", json.RawMessage(`{"command":"ls -a"}`)),
		tools.InputKey("read_file", json.RawMessage(`{"command":"ls"}`)),
	} {
		if other == a {
			t.Errorf("another call has the same key %q", a)
		}
	}
}

func TestGeminiKind(t *testing.T) {
	t.Parallel()
	cases := []struct {
		tool, args  string
		kind, input string
	}{
		{"run_shell_command", `{"command":"make","dir_path":"sub"}`, "shell", `{"command":"make","cwd":"/w/sub"}`},
		{"read_file", `{"file_path":"a.go"}`, "file.read", `{"path":"/w/a.go"}`},
		{"read_file", `{"file_path":"/etc/hosts","start_line":1}`, "file.read", `{"path":"/etc/hosts"}`},
		{"web_fetch", `{"prompt":"Summarize https://example.com/a please"}`, "web.fetch", `{"url":"https://example.com/a"}`},
		{"web_fetch", `{"prompt":"Compare https://a.example and http://b.example"}`, "", ""},
		{"web_fetch", `{"prompt":"no address"}`, "", ""},
		{"glob", `{"pattern":"*.go"}`, "", ""},
		{"run_shell_command", `{"description":"no command"}`, "", ""},
	}
	for _, tc := range cases {
		var fields map[string]json.RawMessage
		json.Unmarshal([]byte(tc.args), &fields)
		kind, got := geminiKind(tc.tool, fields, "/w")
		if kind != tc.kind || tc.kind != "" && !sameJSON(t, got, tc.input) {
			t.Errorf("%s %s: kind %q %s, want %q %s", tc.tool, tc.args, kind, got, tc.kind, tc.input)
		}
	}
}

// TestGeminiOutput: a verdict in the shape Gemini CLI reads; its answers
// in testdata/gemini-cli are those the harness confirmed the CLI obeys.
func TestGeminiOutput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		v       *tools.Verdict
		onError tools.OnError
		want    string // JSON, or a fixture
	}{
		{"allow", &tools.Verdict{Allow: true, Reason: "Approved in hitl by alice."}, tools.OnErrorDeny, "beforetool-allow.json"},
		{"edit", &tools.Verdict{Allow: true, UpdatedInput: json.RawMessage(`{"command": "echo changed > out.txt"}`)}, tools.OnErrorDeny,
			`{"decision":"allow","hookSpecificOutput":{"hookEventName":"BeforeTool","tool_input":{"command":"echo changed > out.txt"}}}`},
		{"deny", &tools.Verdict{Reason: "denied by the test: no writing here"}, tools.OnErrorDeny, "beforetool-deny.json"},
		// A person's deny stays a deny; only a failure asks.
		{"deny, on error ask", &tools.Verdict{Reason: "denied by the test: no writing here"}, tools.OnErrorAsk, "beforetool-deny.json"},
		{"failed", &tools.Verdict{Failed: true, Reason: "hitl could not get a decision"}, tools.OnErrorDeny,
			`{"decision":"deny","reason":"hitl could not get a decision"}`},
		{"failed, on error ask", &tools.Verdict{Failed: true, Reason: "hitl could not get a decision"}, tools.OnErrorAsk,
			`{"decision":"ask","reason":"hitl could not get a decision","systemMessage":"hitl could not get a decision"}`},
		{"bad edit", &tools.Verdict{Allow: true, UpdatedInput: json.RawMessage(`[]`)}, tools.OnErrorDeny,
			`{"decision":"deny","reason":"hitl could not get a decision on this call, so it is denied: the edited input is not a JSON object."}`},
	}
	for _, tc := range cases {
		got := Gemini.Output(tc.v, tc.onError)
		want := tc.want
		if !json.Valid([]byte(want)) {
			want = string(fixture(t, "gemini-cli", want))
		}
		if !sameJSON(t, got, want) {
			t.Errorf("%s: %s\nwant %s", tc.name, got, want)
		}
	}
}
