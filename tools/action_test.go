package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

// TestActionSchemaAgreesWithRequest: what ask_human's schema accepts of an
// action, Request accepts, and what it refuses, Request refuses too.
func TestActionSchemaAgreesWithRequest(t *testing.T) {
	t.Parallel()
	tool, _ := Lookup(AskHumanName)
	for _, tt := range []struct {
		args  string
		valid bool
	}{
		{`{"question": "Run it?", "interaction_type": "action", "action": {"name": "Bash", "args": {"command": "ls"}}}`, true},
		{`{"question": "Run it?", "action": {"name": "Bash"}, "decisions": ["approve", "reject"], "reject_requires_message": true, "args_schema": {"type": "object"}}`, true},
		{`{"action": {"name": "Bash"}}`, false},
		{`{"question": "Run it?", "action": {"name": "Bash"}, "decisions": "approve"}`, false},
		{`{"question": "Run it?", "action": {"name": "Bash"}, "reject_requires_message": "yes"}`, false},
		{`{"question": "Run it?", "action": "Bash"}`, false},
	} {
		var v any
		if err := json.Unmarshal([]byte(tt.args), &v); err != nil {
			t.Fatal(err)
		}
		schemaErr := resolve(t, tool.InputSchema).Validate(v)
		_, reqErr := Request(AskHumanName, json.RawMessage(tt.args))
		if got := schemaErr == nil; got != tt.valid {
			t.Errorf("%s: schema valid = %v (%v), want %v", tt.args, got, schemaErr, tt.valid)
		}
		if got := reqErr == nil; got != tt.valid {
			t.Errorf("%s: Request valid = %v (%v), want %v", tt.args, got, reqErr, tt.valid)
		}
	}
}

func TestActionRequest(t *testing.T) {
	t.Parallel()
	got, err := Request(AskHumanName, json.RawMessage(`{"question": "Write it?", "timeout": 60,
		"action": {"name": "Write", "args": "{\"file_path\": \"a.go\"}", "description": "the file"},
		"args_schema": "{\"type\": \"object\"}", "decisions": ["edit", "reject"], "reject_requires_message": true}`))
	if err != nil {
		t.Fatal(err)
	}
	want := hitl.CreateRequest{Type: hitl.TypeAction, Question: "Write it?", Timeout: 60,
		Action:     &hitl.Action{Name: "Write", Args: json.RawMessage(`{"file_path": "a.go"}`), Description: "the file"},
		ArgsSchema: json.RawMessage(`{"type": "object"}`), Decisions: []hitl.Decision{"edit", "reject"}, RejectRequiresMessage: true}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Request (-want +got):\n%s", d)
	}
	if _, err := Request(AskHumanName, json.RawMessage(`{"question": "x", "action": {"name": "Bash", "args": "not json"}}`)); hitl.ErrorCode(err) != hitl.EINVALID {
		t.Errorf("args a string holding no JSON: %v", err)
	}
}

func TestCallAskHumanAction(t *testing.T) {
	t.Parallel()
	b := startEngine(t)
	ctx := context.Background()
	args := `{"question": "Deploy?", "action": {"name": "Bash", "args": {"command": "make deploy"}}}`
	for _, tt := range []struct{ answer, text string }{
		{`"approve"`, "Approved: run Bash as proposed."},
		{`{"decision": "edit", "args": {"command": "make deploy-staging"}}`, `Approved with edits: run Bash with these arguments instead: {"command":"make deploy-staging"}`},
		{`"reject"`, "Rejected: do not run Bash."},
		{`{"decision": "reject", "message": "freeze"}`, "Rejected: do not run Bash. Reason: freeze"},
		{`{"decision": "respond", "message": "use make ship"}`, "Do not run Bash; the person answered instead: use make ship"},
	} {
		ch := callAsync(ctx, b, AskHumanName, args)
		answer(t, b, tt.answer)
		r := receive(t, ch)
		if r.IsError {
			t.Errorf("%s: error %q", tt.answer, r.Text)
			continue
		}
		if want := tt.text + "\n(answered by alice via web)"; r.Text != want {
			t.Errorf("%s: text %q, want %q", tt.answer, r.Text, want)
		}
		checkOutcome(t, r)
	}
}
