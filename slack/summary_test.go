package slack

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
)

// TestActionSummaryInMessage: an action without a question of its own is
// named by its command in the message's text and blocks, not "Run Bash?";
// with a question of its own, the command goes beneath it.
func TestActionSummaryInMessage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	bash := func(question string) *hitl.Interaction {
		return h.ask(hitl.CreateRequest{Type: hitl.TypeAction, Question: question, SourceAgent: "claude-code",
			Action: &hitl.Action{Name: "Bash", Args: json.RawMessage(`{"command":"kubectl -n prod rollout restart deploy/api"}`)}})
	}
	post, _ := h.waitPosted(bash(""))
	if got, want := post.Form.Get("text"), "Action to review: kubectl -n prod rollout restart deploy/api"; got != want {
		t.Errorf("posted text %q, want %q", got, want)
	}
	if strings.Contains(post.Blocks(), "Run Bash?") {
		t.Errorf("blocks name the action Run Bash?: %s", post.Blocks())
	}
	post, _ = h.waitPosted(bash("Restart the API?"))
	if got, want := post.Form.Get("text"), "Action to review: Restart the API?"; got != want {
		t.Errorf("posted text %q, want %q", got, want)
	}
	if !strings.Contains(post.Blocks(), "Restart the API?\\n`kubectl -n prod rollout restart deploy/api`") {
		t.Errorf("blocks lack the command beneath the question: %s", post.Blocks())
	}
}
