package agents

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl/tools"
)

// Cursor's hook inputs, as its documentation shows them
// (testdata/cursor), read into a ToolCall with its kind; the file's
// content is never part of it.
func TestCursorToolCall(t *testing.T) {
	t.Parallel()
	cases := []struct {
		fixture, tool, via  string
		input, kind, kindIn string
	}{
		{"before-shell-execution.json", "Shell", "beforeShellExecution hook",
			`{"command":"npm install express","cwd":"/work"}`, "shell", `{"command":"npm install express","cwd":"/work"}`},
		{"before-mcp-execution-string.json", "database_query", "beforeMCPExecution hook",
			`{"query":"SELECT * FROM users"}`, "mcp", `{"server":"npx mcp-server","tool":"database_query","args":{"query":"SELECT * FROM users"}}`},
		{"before-mcp-execution-object.json", "database_query", "beforeMCPExecution hook",
			`{"query":"SELECT * FROM users"}`, "mcp", `{"server":"http://localhost:3000","tool":"database_query","args":{"query":"SELECT * FROM users"}}`},
		{"before-read-file.json", "Read", "beforeReadFile hook",
			`{"file_path":"/work/secrets.env","attachments":[{"type":"file","file_path":"/work/.cursorrules"}]}`, "file.read", `{"path":"/work/secrets.env"}`},
	}
	for _, tc := range cases {
		call, err := Cursor.ToolCall(fixture(t, "cursor", tc.fixture))
		if err != nil {
			t.Fatalf("%s: %v", tc.fixture, err)
		}
		if call.Agent != "Cursor" || call.Tool != tc.tool || call.Via != tc.via || call.SessionID != "00000000-0000-0000-0000-000000000000" || call.Cwd != "/work" {
			t.Errorf("%s: %+v", tc.fixture, call)
		}
		if !sameJSON(t, call.Input, tc.input) {
			t.Errorf("%s: input %s, want %s", tc.fixture, call.Input, tc.input)
		}
		if call.Kind != tc.kind || !sameJSON(t, call.KindInput, tc.kindIn) {
			t.Errorf("%s: kind %q %s, want %q %s", tc.fixture, call.Kind, call.KindInput, tc.kind, tc.kindIn)
		}
		if strings.Contains(string(call.Input), "API_KEY") {
			t.Errorf("%s: the file's content reached the call: %s", tc.fixture, call.Input)
		}
		if !strings.HasPrefix(call.CallKey, tc.tool+":sha256:") {
			t.Errorf("%s: call key %q", tc.fixture, call.CallKey)
		}
	}
}

// TestCursorNotItsInput: input of another event, or missing the event's
// fields, is not Cursor's to decide.
func TestCursorNotItsInput(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`[]`,
		`{"command":"ls"}`,
		`{"hook_event_name":"afterFileEdit","file_path":"/a"}`,
		`{"hook_event_name":"beforeShellExecution","cwd":"/w"}`,
		`{"hook_event_name":"beforeMCPExecution","tool_name":"q"}`,
		`{"hook_event_name":"beforeReadFile","content":"x"}`,
	} {
		if _, err := Cursor.ToolCall([]byte(in)); err == nil {
			t.Errorf("%s: read as a call", in)
		}
	}
}

// TestCursorOutput: allow, deny with the reason for the user and the
// model, a failure denied (or left to Cursor's prompt with --on-error
// ask), and an edit denied since Cursor cannot run it.
func TestCursorOutput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		v       tools.Verdict
		onError tools.OnError
		want    string
	}{
		{"allow", tools.Verdict{Allow: true, Reason: "Approved."}, tools.OnErrorDeny, `{"permission":"allow"}`},
		{"deny", tools.Verdict{Reason: "Rejected: not now."}, tools.OnErrorDeny,
			`{"permission":"deny","user_message":"Rejected: not now.","agent_message":"Rejected: not now."}`},
		{"failed", tools.Verdict{Failed: true, Reason: "hitl is down."}, tools.OnErrorDeny,
			`{"permission":"deny","user_message":"hitl is down.","agent_message":"hitl is down."}`},
		{"failed ask", tools.Verdict{Failed: true, Reason: "hitl is down."}, tools.OnErrorAsk,
			`{"permission":"ask","user_message":"hitl is down."}`},
		{"rejected, ask", tools.Verdict{Reason: "Rejected."}, tools.OnErrorAsk,
			`{"permission":"deny","user_message":"Rejected.","agent_message":"Rejected."}`},
		{"edited", tools.Verdict{Allow: true, UpdatedInput: json.RawMessage(`{"command":"ls"}`)}, tools.OnErrorDeny,
			`{"permission":"deny","user_message":"The call was edited in hitl, and Cursor cannot run an edited call, so it is denied; the edited input is {\"command\":\"ls\"}.","agent_message":"The call was edited in hitl, and Cursor cannot run an edited call, so it is denied; the edited input is {\"command\":\"ls\"}."}`},
	}
	for _, tc := range cases {
		got := Cursor.Output(&tc.v, tc.onError)
		if !sameJSON(t, got, tc.want) {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
