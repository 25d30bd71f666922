package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The answers, in the shapes internal/claudetest confirmed against the
// real Claude Code CLI (its testdata holds the ones it sent).

func TestHookOutput(t *testing.T) {
	t.Parallel()
	edited := json.RawMessage(`{"command":"echo changed > out.txt","description":"Write out.txt"}`)
	allow := &Verdict{Allow: true, Reason: "Approved in hitl by alice."}
	edit := &Verdict{Allow: true, UpdatedInput: edited, Reason: "Approved in hitl by alice, with edited input."}
	deny := &Verdict{Reason: "denied by the test: no writing here"}
	failed := &Verdict{Failed: true, Reason: "hitl could not get a decision"}
	for _, tc := range []struct {
		name    string
		event   string
		v       *Verdict
		onError OnError
		want    string // JSON, or a fixture of internal/claudetest
	}{
		{"PreToolUse allow", HookPreToolUse, allow, OnErrorDeny,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"Approved in hitl by alice."}}`},
		{"PreToolUse edit", HookPreToolUse, edit, OnErrorDeny,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"Approved in hitl by alice, with edited input.","updatedInput":{"command":"echo changed > out.txt","description":"Write out.txt"}}}`},
		{"PreToolUse deny", HookPreToolUse, deny, OnErrorDeny, "pretooluse-deny.json"},
		// A person's deny stays a deny; only a failure asks.
		{"PreToolUse deny, on error ask", HookPreToolUse, deny, OnErrorAsk, "pretooluse-deny.json"},
		{"PreToolUse failure", HookPreToolUse, failed, OnErrorDeny,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"hitl could not get a decision"}}`},
		{"PreToolUse failure, on error ask", HookPreToolUse, failed, OnErrorAsk,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"hitl could not get a decision"}}`},
		{"PermissionRequest allow", HookPermissionRequest, allow, OnErrorDeny, "permissionrequest-allow.json"},
		{"PermissionRequest edit", HookPermissionRequest, edit, OnErrorDeny, "permissionrequest-updated-input.json"},
		{"PermissionRequest failure", HookPermissionRequest, failed, OnErrorDeny,
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"hitl could not get a decision"}}}`},
		{"PermissionRequest failure, on error ask", HookPermissionRequest, failed, OnErrorAsk, `{}`},
		// An edit that is not an object cannot be sent: denied.
		{"PreToolUse bad edit", HookPreToolUse, &Verdict{Allow: true, UpdatedInput: json.RawMessage(`[1]`)}, OnErrorDeny,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"hitl could not get a decision on this call, so it is denied: the edited input is not a JSON object."}}`},
	} {
		got := HookOutput(tc.event, tc.v, tc.onError)
		want := tc.want
		if strings.HasSuffix(want, ".json") {
			want = fixture(t, want)
		}
		if !sameJSON(t, got, want) {
			t.Errorf("%s: %s\nwant %s", tc.name, got, want)
		}
	}
}

func TestPermissionDecisionText(t *testing.T) {
	t.Parallel()
	input := json.RawMessage(`{"command":"echo hi > out.txt","description":"Write out.txt"}`)
	edited := json.RawMessage(`{"command":"echo changed > out.txt","description":"Write out.txt"}`)
	for _, tc := range []struct {
		v    *Verdict
		want string
	}{
		// updatedInput is always sent on allow: the proposed input unless
		// edited.
		{&Verdict{Allow: true}, `{"behavior":"allow","updatedInput":{"command":"echo hi > out.txt","description":"Write out.txt"}}`},
		{&Verdict{Allow: true, UpdatedInput: edited}, "permission-tool-updated-input.json"},
		{&Verdict{Reason: "denied by the test: a person said no"}, "permission-tool-deny.json"},
	} {
		got := permissionDecision(tc.v, input).Text()
		want := tc.want
		if strings.HasSuffix(want, ".json") {
			want = fixture(t, want)
		}
		if !sameJSON(t, []byte(got), want) {
			t.Errorf("%s\nwant %s", got, want)
		}
	}
}

func TestCallPermissionPrompt(t *testing.T) {
	t.Parallel()
	b := startEngine(t)
	ch := make(chan PermissionDecision, 1)
	go func() {
		// The tool_use id from _meta stands in for a missing argument.
		d, _ := CallPermissionPrompt(context.Background(), b, json.RawMessage(`{"tool_name": "Bash", "input": {"command": "ls"}}`), "toolu_07", nil)
		ch <- d
	}()
	in := answer(t, b, `"approve"`)
	if d := <-ch; d.Text() != `{"behavior":"allow","updatedInput":{"command":"ls"}}` {
		t.Errorf("decision %s", d.Text())
	}
	if in.IdempotencyKey != "claude-code:toolu_07" || in.SourceAgent != ClaudeCodeAgent || !strings.Contains(in.Context, "permission prompt") {
		t.Errorf("key %q, agent %q, context %q", in.IdempotencyKey, in.SourceAgent, in.Context)
	}

	for _, args := range []string{``, `[]`, `{"tool_name": 1}`, `{"tool_name": "Bash", "input": [1]}`} {
		d, v := CallPermissionPrompt(context.Background(), b, json.RawMessage(args), "", nil)
		if d.Behavior != "deny" || !v.Failed || !strings.Contains(d.Message, "so it is denied") {
			t.Errorf("%q: %s, want a deny that says why", args, d.Text())
		}
	}
}

func TestContextMarkdown(t *testing.T) {
	t.Parallel()
	c := ToolCall{Tool: "mcp__gh__create_issue", Cwd: "/src/`odd`\npath"}
	want := "Claude Code asks to run **mcp\\_\\_gh\\_\\_create\\_issue** in `` /src/`odd` path ``."
	if got := c.context(); got != want {
		t.Errorf("context %q\nwant %q", got, want)
	}
	long := idempotencyKey(ClaudeCodeAgent, strings.Repeat("s", 150), strings.Repeat("t", 100))
	if len(long) > 200 || !strings.HasPrefix(long, "claude-code:") {
		t.Errorf("long key %q (%d bytes), want at most 200", long, len(long))
	}
	if got := clip("ab\x00c\xffé", 7); got != "abc\uFFFD" {
		t.Errorf("clip %q", got)
	}
}

// fixture returns a file of internal/claudetest's testdata.
func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "internal", "claudetest", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sameJSON reports whether got and want are the same JSON value.
func sameJSON(t *testing.T, got []byte, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s is not JSON: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s is not JSON: %v", want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	return string(gb) == string(wb)
}
