package agents

import (
	"encoding/json"
	"testing"

	"github.com/hitl-sh/hitl/tools"
)

// TestClineToolCall: Cline's PreToolUse input (written from its source)
// read into a ToolCall, and the kinds of its tools.
func TestClineToolCall(t *testing.T) {
	t.Parallel()
	call, err := Cline.ToolCall(fixture(t, "cline", "pretooluse-run-commands.json"))
	if err != nil {
		t.Fatal(err)
	}
	if call.Agent != "Cline" || call.Tool != "run_commands" || call.ToolUseID != "call_0" || call.Cwd != "/work" ||
		call.SessionID != "00000000-0000-0000-0000-000000000000" || call.Kind != "shell" || !sameJSON(t, call.KindInput, `{"command":"echo hi > out.txt","cwd":"/work"}`) {
		t.Errorf("%+v %s", call, call.KindInput)
	}
	cases := []struct{ tool, input, kind, kindInput string }{
		{"run_commands", `{"commands":["ls","pwd"]}`, "", ""},
		{"editor", `{"path":"a.txt","old_text":"x","new_text":"y"}`, "file.edit", `{"path":"/work/a.txt","old":"x","new":"y"}`},
		{"editor", `{"path":"/w/b.txt","new_text":"y"}`, "file.write", `{"path":"/w/b.txt","content":"y"}`},
		{"editor", `{"path":"/w/b.txt","new_text":"y","insert_line":3}`, "", ""},
		{"read_files", `{"files":[{"path":"/w/c"}]}`, "file.read", `{"path":"/w/c"}`},
		{"fetch_web_content", `{"requests":[{"url":"https://x.test/","prompt":"p"}]}`, "web.fetch", `{"url":"https://x.test/"}`},
		{"notes__note", `{"text":"t"}`, "mcp", `{"server":"notes","tool":"note","args":{"text":"t"}}`},
	}
	for _, tc := range cases {
		kind, in := clineKind(tc.tool, json.RawMessage(tc.input), decode(t, tc.input), "/work")
		if kind != tc.kind || (kind != "" && !sameJSON(t, in, tc.kindInput)) {
			t.Errorf("%s %s: %q %s, want %q %s", tc.tool, tc.input, kind, in, tc.kind, tc.kindInput)
		}
	}
	if _, err := Cline.ToolCall([]byte(`{"hookName":"tool_result"}`)); err == nil {
		t.Error("a tool_result hook's input was read as a call")
	}
}

func decode(t *testing.T, s string) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestClineOutput: only an allow runs the call (with the edited input
// after an edit); a deny and every failure cancel the task.
func TestClineOutput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		v    tools.Verdict
		want string
	}{
		{tools.Verdict{Allow: true}, `{"cancel":false}`},
		{tools.Verdict{Allow: true, UpdatedInput: json.RawMessage(`{"commands":["ls"]}`)}, `{"cancel":false,"overrideInput":{"commands":["ls"]}}`},
		{tools.Verdict{Reason: "Rejected."}, `{"cancel":true,"errorMessage":"Rejected."}`},
		{tools.Verdict{Failed: true, Reason: "hitl is down."}, `{"cancel":true,"errorMessage":"hitl is down."}`},
	}
	for _, tc := range cases {
		if got := Cline.Output(&tc.v, tools.OnErrorAsk); !sameJSON(t, got, tc.want) {
			t.Errorf("%+v: %s, want %s", tc.v, got, tc.want)
		}
	}
}
