package agents

import (
	"encoding/json"
	"testing"

	"github.com/hitl-sh/hitl/tools"
)

// Codex's hook input, as Codex 0.169.0 sent it (testdata/codex), read
// into a ToolCall with its kind.
func TestCodexToolCall(t *testing.T) {
	t.Parallel()
	const session = "00000000-0000-0000-0000-000000000000"
	cases := []struct {
		fixture         string
		tool, toolUseID string
		kind, input     string
	}{
		{"pretooluse-input-bash.json", "Bash", "call_00",
			"shell", `{"command":"echo hi > out.txt","cwd":"$CWD"}`},
		{"pretooluse-input-apply-patch-add.json", "apply_patch", "call_00",
			"file.write", `{"path":"$CWD/out.txt","content":"from the model\n"}`},
		{"pretooluse-input-apply-patch-update.json", "apply_patch", "call_00",
			"file.edit", `{"path":"$CWD/out.txt","diff":"*** Begin Patch\n*** Update File: out.txt\n@@\n-old line\n+from the model\n*** End Patch\n"}`},
		{"pretooluse-input-mcp.json", "mcp__notes__note", "call_01",
			"mcp", `{"server":"notes","tool":"note","args":{"text":"from the model"}}`},
	}
	for _, tc := range cases {
		data := fixture(t, "codex", tc.fixture)
		call, err := Codex.ToolCall(data)
		if err != nil {
			t.Fatalf("%s: %v", tc.fixture, err)
		}
		var raw struct {
			ToolInput json.RawMessage `json:"tool_input"`
		}
		json.Unmarshal(data, &raw)
		if call.Agent != "Codex" || call.Tool != tc.tool || call.ToolUseID != tc.toolUseID || call.SessionID != session ||
			call.Cwd != "$CWD" || call.PermissionMode != "bypassPermissions" || call.Via != "PreToolUse hook" || call.CallKey != "" {
			t.Errorf("%s: %+v", tc.fixture, call)
		}
		if !sameJSON(t, call.Input, string(raw.ToolInput)) {
			t.Errorf("%s: input %s, want tool_input %s as it is", tc.fixture, call.Input, raw.ToolInput)
		}
		if call.Kind != tc.kind || !sameJSON(t, call.KindInput, tc.input) {
			t.Errorf("%s: kind %q %s, want %q %s", tc.fixture, call.Kind, call.KindInput, tc.kind, tc.input)
		}
	}
}

// TestCodexPatchKind: a patch has a kind only when it touches one file.
func TestCodexPatchKind(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, patch, cwd string
		kind, input      string
	}{
		{"add, absolute", "*** Begin Patch\n*** Add File: /tmp/a.txt\n+one\n+two\n*** End Patch\n", "/w",
			"file.write", `{"path":"/tmp/a.txt","content":"one\ntwo\n"}`},
		{"add empty", "*** Begin Patch\n*** Add File: e.txt\n*** End Patch\n", "/w",
			"file.write", `{"path":"/w/e.txt","content":""}`},
		{"delete", "*** Begin Patch\n*** Delete File: old.txt\n*** End Patch\n", "/w",
			"file.edit", `{"path":"/w/old.txt","diff":"*** Begin Patch\n*** Delete File: old.txt\n*** End Patch\n"}`},
		{"out of the project", "*** Begin Patch\n*** Update File: ../../etc/hosts\n@@\n-a\n+b\n*** End Patch\n", "/w/p",
			"file.edit", `{"path":"/etc/hosts","diff":"*** Begin Patch\n*** Update File: ../../etc/hosts\n@@\n-a\n+b\n*** End Patch\n"}`},
		{"two files", "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** Add File: b.txt\n+x\n*** End Patch\n", "/w", "", ""},
		{"moved", "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-a\n+b\n*** End Patch\n", "/w", "", ""},
		{"no file", "hello", "/w", "", ""},
	}
	for _, tc := range cases {
		input, _ := json.Marshal(map[string]string{"command": tc.patch})
		kind, got := codexKind("apply_patch", input, tc.cwd)
		if kind != tc.kind || tc.kind != "" && !sameJSON(t, got, tc.input) || tc.kind == "" && got != nil {
			t.Errorf("%s: kind %q %s, want %q %s", tc.name, kind, got, tc.kind, tc.input)
		}
	}
	// Other tools: a command without one, a name that is not an MCP tool's.
	for _, tool := range []string{"Bash", "mcp__notes", "mcp____x", "write_stdin"} {
		if kind, _ := codexKind(tool, json.RawMessage(`{"cmd":"ls"}`), "/w"); kind != "" {
			t.Errorf("%s: kind %q, want none", tool, kind)
		}
	}
}

// TestCodexOutput: a verdict in the shape Codex reads; its answers in
// testdata/codex are those the harness confirmed Codex obeys.
func TestCodexOutput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		v       *tools.Verdict
		onError tools.OnError
		want    string // JSON, or a fixture
	}{
		{"allow", &tools.Verdict{Allow: true, Reason: "allowed by the test"}, tools.OnErrorDeny, "pretooluse-allow.json"},
		{"edit", &tools.Verdict{Allow: true, Reason: "edited by the test", UpdatedInput: json.RawMessage(`{"command": "echo changed > out.txt"}`)}, tools.OnErrorDeny,
			"pretooluse-updated-input.json"},
		{"deny", &tools.Verdict{Reason: "denied by the test: no writing here"}, tools.OnErrorDeny, "pretooluse-deny.json"},
		{"failed", &tools.Verdict{Failed: true, Reason: "hitl could not get a decision"}, tools.OnErrorDeny,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"hitl could not get a decision"}}`},
		// Codex runs a call its hook answers "ask": a failure stays a deny.
		{"failed, on error ask", &tools.Verdict{Failed: true, Reason: "hitl could not get a decision"}, tools.OnErrorAsk,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"hitl could not get a decision"}}`},
		{"bad edit", &tools.Verdict{Allow: true, UpdatedInput: json.RawMessage(`"x"`)}, tools.OnErrorDeny,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"hitl could not get a decision on this call, so it is denied: the edited input is not a JSON object."}}`},
	}
	for _, tc := range cases {
		got := Codex.Output(tc.v, tc.onError)
		want := tc.want
		if !json.Valid([]byte(want)) {
			want = string(fixture(t, "codex", want))
		}
		if !sameJSON(t, got, want) {
			t.Errorf("%s: %s\nwant %s", tc.name, got, want)
		}
	}
}
