package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/turns"
)

// replyBox is the selector of the handoff's reply box in the card of id,
// by its accessible name.
func replyBox(id string) string {
	return in(id, `textarea[aria-label="Your reply"]`)
}

// TestHandoffReplyInInbox: an agent hands a conversation to the ops group.
// Bob's card shows the agent's message and context and says the agent
// handed it to a person; as he starts to reply he takes it over (carol
// cannot reply over him), and Ctrl+Enter sends his reply to the agent's
// orchestrator. A second handoff, which carol answers elsewhere, shows bob
// who replied.
func TestHandoffReplyInInbox(t *testing.T) {
	turns.Parallel(t)
	srv := newServerWith(t, serverOptions{auth: true})
	handoff := func(message string) string {
		return srv.ask(t, map[string]any{"interaction_type": "handoff", "question": message,
			"context": "The customer asked twice for a refund of order **1432**.", "session_id": "chat-77",
			"source_agent": "support-bot", "targets": map[string]any{"groups": []string{"ops"}}})
	}
	id := handoff("I can't refund a paid order; a person needs to take this conversation.")
	wait := srv.wait(t, id)

	bob := openSignIn(t, srv, recordOutcomes())
	bob.signIn("bob", bobPassword)
	bob.waitSignedIn("bob")
	bob.waitCardText(id, "The agent handed this conversation to a person")
	bob.waitCardText(id, "I can't refund a paid order; a person needs to take this conversation.")
	bob.waitCardText(id, "The customer asked twice for a refund of order 1432.")
	if got := eval[string](bob, fmt.Sprintf(`document.querySelector(%s).getAttribute("aria-label")`, js(in(id, `button[type="submit"]`)))); got != "Send reply: I can't refund a paid order; a person needs to take this conversation." {
		t.Errorf("the send button's name is %q", got)
	}
	bob.do(chromedp.Evaluate[chromedp.Void](`document.activeElement.blur(); window.scrollTo(0, 0)`))
	checkAxe(t, bob)

	// Bob starts to reply: he takes the conversation over.
	bob.do(chromedp.SendKeys(replyBox(id), "Hi, I'm Bob from support. "))
	bob.waitCardText(id, "You are on it")
	if _, err := srv.Broker.Respond(opsPerson("carol"), id, json.RawMessage(`"Carol here"`)); hitl.ErrorCode(err) != hitl.ECONFLICT {
		t.Errorf("carol replied while bob holds the conversation: %v; want a conflict", err)
	}
	bob.do(chromedp.SendKeys(replyBox(id), "I've refunded the order."), ctrlEnter())
	got := awaitResult(t, wait)
	assertValue(t, got, `"Hi, I'm Bob from support. I've refunded the order."`)
	if got.Result.RespondedBy != "bob" {
		t.Errorf("responded_by %q, want bob", got.Result.RespondedBy)
	}
	bob.waitOutcome(id, "Answer sent")

	// Carol replies to another one on her own channel: bob sees who did.
	other := handoff("The customer wants to change the delivery address.")
	bob.waitCard(other)
	if _, err := srv.Broker.Respond(opsPerson("carol"), other, json.RawMessage(`"Done: address changed."`)); err != nil {
		t.Fatal(err)
	}
	bob.waitOutcome(other, "carol replied via the web inbox: “Done: address changed.”")
	in, err := srv.Broker.Get(context.Background(), other)
	if err != nil || in.Status != hitl.StatusAnswered {
		t.Fatalf("the second handoff: %+v, %v", in, err)
	}
}
