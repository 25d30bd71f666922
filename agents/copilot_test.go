package agents

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl/tools"
)

// Copilot CLI's hook input, as Copilot CLI 1.0.102 sent it
// (testdata/copilot-cli), read into a ToolCall with its kind.
func TestCopilotToolCall(t *testing.T) {
	t.Parallel()
	cases := []struct {
		fixture, tool string
		kind, input   string
	}{
		{"pretooluse-input-bash.json", "bash", "shell", `{"command":"echo hi > out.txt","cwd":"/work"}`},
		{"pretooluse-input-create.json", "create", "file.write", `{"path":"/work/out.txt","content":"from the model\n"}`},
		{"pretooluse-input-edit.json", "edit", "file.edit", `{"path":"/work/out.txt","old":"old line","new":"from the model"}`},
		{"pretooluse-input-view.json", "view", "file.read", `{"path":"/work/out.txt"}`},
		{"pretooluse-input-mcp.json", "notes-note", "mcp", `{"server":"notes","tool":"note","args":{"text":"from the model"}}`},
	}
	for _, tc := range cases {
		// The paths are absolute in the payloads; $CWD is not.
		data := bytes.ReplaceAll(fixture(t, "copilot-cli", tc.fixture), []byte("$CWD"), []byte("/work"))
		call, err := Copilot.ToolCall(data)
		if err != nil {
			t.Fatalf("%s: %v", tc.fixture, err)
		}
		var raw struct {
			ToolArgs json.RawMessage `json:"toolArgs"`
		}
		json.Unmarshal(data, &raw)
		if call.Agent != "Copilot CLI" || call.Tool != tc.tool || call.ToolUseID != "" || call.SessionID != "00000000-0000-0000-0000-000000000000" ||
			call.Cwd != "/work" || call.Via != "preToolUse hook" {
			t.Errorf("%s: %+v", tc.fixture, call)
		}
		if !sameJSON(t, call.Input, string(raw.ToolArgs)) {
			t.Errorf("%s: input %s, want toolArgs %s as it is", tc.fixture, call.Input, raw.ToolArgs)
		}
		if call.Kind != tc.kind || !sameJSON(t, call.KindInput, tc.input) {
			t.Errorf("%s: kind %q %s, want %q %s", tc.fixture, call.Kind, call.KindInput, tc.kind, tc.input)
		}
		if !strings.HasPrefix(call.CallKey, tc.tool+":sha256:") {
			t.Errorf("%s: call key %q, want the tool and a hash of its input", tc.fixture, call.CallKey)
		}
	}
}

// TestCopilotToolArgsString: toolArgs given as a string holding the JSON
// object is read as that object.
func TestCopilotToolArgsString(t *testing.T) {
	t.Parallel()
	call, err := Copilot.ToolCall([]byte(`{"sessionId":"s","cwd":"/w","toolName":"bash","toolArgs":"{\"command\":\"ls\"}"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(t, call.Input, `{"command":"ls"}`) || call.Kind != "shell" || !sameJSON(t, call.KindInput, `{"command":"ls","cwd":"/w"}`) {
		t.Errorf("input %s, kind %q %s; want the object inside the string", call.Input, call.Kind, call.KindInput)
	}
}

func TestCopilotKind(t *testing.T) {
	t.Parallel()
	cases := []struct {
		tool, args  string
		kind, input string
	}{
		{"bash", `{"command":"make","description":"Build"}`, "shell", `{"command":"make","cwd":"/w"}`},
		{"create", `{"path":"a.go","file_text":"package a\n"}`, "file.write", `{"path":"/w/a.go","content":"package a\n"}`},
		{"view", `{"path":"/etc/hosts","view_range":[1,2]}`, "file.read", `{"path":"/etc/hosts"}`},
		{"github-create_issue", `{"title":"t"}`, "mcp", `{"server":"github","tool":"create_issue","args":{"title":"t"}}`},
		// Which dash parts the server from the tool is unknown: no kind.
		{"my-server-tool", `{}`, "", ""},
		{"read_bash", `{"shellId":"0"}`, "", ""},
		{"glob", `{"pattern":"*.go"}`, "", ""},
		{"bash", `{"description":"no command"}`, "", ""},
	}
	for _, tc := range cases {
		var fields map[string]json.RawMessage
		json.Unmarshal([]byte(tc.args), &fields)
		kind, got := copilotKind(tc.tool, json.RawMessage(tc.args), fields, "/w")
		if kind != tc.kind || tc.kind != "" && !sameJSON(t, got, tc.input) {
			t.Errorf("%s %s: kind %q %s, want %q %s", tc.tool, tc.args, kind, got, tc.kind, tc.input)
		}
	}
}

// TestCopilotOutput: a verdict in the shape Copilot CLI reads; its answers
// in testdata/copilot-cli are those the harness confirmed the CLI obeys.
func TestCopilotOutput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		v       *tools.Verdict
		onError tools.OnError
		want    string // JSON, or a fixture
	}{
		{"allow", &tools.Verdict{Allow: true, Reason: "Approved in hitl by alice."}, tools.OnErrorDeny, "pretooluse-allow.json"},
		{"edit", &tools.Verdict{Allow: true, UpdatedInput: json.RawMessage(`{"command":"echo changed > out.txt","description":"Run echo changed > out.txt"}`)}, tools.OnErrorDeny,
			"pretooluse-modified-args.json"},
		{"deny", &tools.Verdict{Reason: "denied by the test: no writing here"}, tools.OnErrorDeny, "pretooluse-deny.json"},
		// Copilot CLI cannot ask: a failure is a deny whatever onError.
		{"failed, on error ask", &tools.Verdict{Failed: true, Reason: "hitl could not get a decision"}, tools.OnErrorAsk,
			`{"permissionDecision":"deny","permissionDecisionReason":"hitl could not get a decision"}`},
		{"deny without a reason", &tools.Verdict{}, tools.OnErrorDeny, `{"permissionDecision":"deny","permissionDecisionReason":"Denied in hitl."}`},
		{"bad edit", &tools.Verdict{Allow: true, UpdatedInput: json.RawMessage(`"x"`)}, tools.OnErrorDeny,
			`{"permissionDecision":"deny","permissionDecisionReason":"hitl could not get a decision on this call, so it is denied: the edited input is not a JSON object."}`},
	}
	for _, tc := range cases {
		got := Copilot.Output(tc.v, tc.onError)
		want := tc.want
		if !json.Valid([]byte(want)) {
			want = string(fixture(t, "copilot-cli", want))
		}
		if !sameJSON(t, got, want) {
			t.Errorf("%s: %s\nwant %s", tc.name, got, want)
		}
	}
}
