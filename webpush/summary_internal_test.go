package webpush

import (
	"encoding/json"
	"testing"

	"github.com/hitl-sh/hitl"
)

// TestPayloadNamesActionBySummary: a push about an action says what it
// will do, not "Run Bash?".
func TestPayloadNamesActionBySummary(t *testing.T) {
	a := &hitl.Action{Name: "Bash", Args: json.RawMessage(`{"command":"terraform apply -auto-approve"}`)}
	in := &hitl.Interaction{ID: "i1", Type: hitl.TypeAction, Action: a, Question: a.DefaultQuestion()}
	if got, want := payloadFor(in).Question, "terraform apply -auto-approve"; got != want {
		t.Errorf("payload question %q, want %q", got, want)
	}
	in.Question = "Apply the plan?"
	if got, want := payloadFor(in).Question, "Apply the plan?\nterraform apply -auto-approve"; got != want {
		t.Errorf("payload question %q, want %q", got, want)
	}
}
