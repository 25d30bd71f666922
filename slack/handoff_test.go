package slack

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
)

// TestHandoffReplyModal: a handoff's message says the conversation was
// handed to a person and has a Reply button; its modal sends the reply.
func TestHandoffReplyModal(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	withUsers(t, h)
	in := h.ask(hitl.HandoffRequest{Message: "The customer wants a person.", Context: "Order 1432", SessionID: "chat-1"}.CreateRequest())
	post, _ := h.waitPosted(in)
	for _, want := range []string{"Conversation handed to you", "The agent handed this conversation to a person", "The customer wants a person."} {
		if !strings.Contains(post.Blocks(), want) {
			t.Errorf("message lacks %q:\n%s", want, post.Blocks())
		}
	}
	view := h.openModal(post, "Reply")
	if !strings.Contains(mustJSON(t, view), "Your reply") {
		t.Errorf("modal: %v; want a reply box", view)
	}
	if body := h.submit(view, map[string]any{answerBlock: map[string]any{valueAction: map[string]any{"type": "plain_text_input", "value": "Hi, Alice here."}}}); body != "" {
		t.Errorf("view_submission response: got %q, want none", body)
	}
	wantResult(t, h.waitEnded(in.ID), `"Hi, Alice here."`, "alice")
	if upd := h.waitUpdated(in); !strings.Contains(upd.Blocks(), "✅ Replied by *alice* via slack") {
		t.Errorf("updated message: %s", upd.Blocks())
	}
}

// TestHandoffThreadReply: a reply in the message's thread is the reply.
func TestHandoffThreadReply(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	withUsers(t, h)
	in := h.ask(hitl.HandoffRequest{Message: "Over to a person."}.CreateRequest())
	_, row := h.waitPosted(in)
	events := h.s.EventsHandler()
	if code, _ := h.post(events, "application/json", reply("Ev1", slackAlice, testChannel, row.TS, "I'll call the customer back."), time.Now(), testSecret, nil); code != http.StatusOK {
		t.Fatalf("events: got %d", code)
	}
	wantResult(t, h.waitEnded(in.ID), `"I'll call the customer back."`, "alice")
}
