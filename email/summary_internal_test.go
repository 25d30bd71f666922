package email

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
)

// TestMailNamesActionBySummary: a mail about an action without a
// question of its own is titled by what it does, and one with a
// question of its own carries the summary beneath it.
func TestMailNamesActionBySummary(t *testing.T) {
	a := &hitl.Action{Name: "Write", Kind: hitl.KindFileWrite, Input: hitl.FileWriteInput("config/prod.yaml", "a\nb\n"), Args: json.RawMessage(`{}`)}
	in := &hitl.Interaction{Type: hitl.TypeAction, Action: a, Question: a.DefaultQuestion()}
	if got, want := subject(in, 0), "[hitl] Write config/prod.yaml (2 lines)"; got != want {
		t.Errorf("subject %q, want %q", got, want)
	}
	in.Question = "Switch prod to the new pool?"
	d := mailData{Question: in.Headline(), Summary: in.Subline(), Agent: "claude-code"}
	text := plainText(in, d)
	if !strings.HasPrefix(text, "Switch prod to the new pool?\n\nWrite config/prod.yaml (2 lines)\n") {
		t.Errorf("text part starts %q, want the question and the summary beneath", text)
	}
	var html strings.Builder
	if err := mailTemplate().Execute(&html, d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), "Write config/prod.yaml (2 lines)</p>") {
		t.Errorf("HTML part lacks the summary: %s", html.String())
	}
}
