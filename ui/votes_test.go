package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl"
)

// opsPerson is ctx for a person of the ops group answering on the web.
func opsPerson(name string) context.Context {
	return hitl.WithCaller(context.Background(), hitl.Caller{Name: name, Channel: hitl.ChannelWeb, Role: hitl.RoleResponder, Groups: []string{"ops"}})
}

// TestCardShowsVotes: bob and carol (ops) must both approve. Bob's card
// says where the votes stand, takes his approval, then shows it as his
// and locks the answer; carol's approval, on another channel, decides it.
func TestCardShowsVotes(t *testing.T) {
	t.Parallel()
	srv := newServerWith(t, serverOptions{auth: true})
	id := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Deploy 1432 to production?",
		"targets": map[string]any{"groups": []string{"ops"}}, "consensus": map[string]any{"mode": "all"}})
	wait := srv.wait(t, id)

	bob := openSignIn(t, srv)
	bob.signIn("bob", bobPassword)
	bob.waitSignedIn("bob")
	bob.waitCardText(id, "0 of 2 approvals")
	bob.do(chromedp.Click(chromedp.CSS(card(id) + ` button[data-answer="true"]`)))
	bob.waitCardText(id, "1 of 2 approvals — you approved")
	bob.waitCardText(id, "You approved. Your vote is counted")
	if !eval[bool](bob, fmt.Sprintf(`document.querySelector(%s).disabled`, js(card(id)+" fieldset.answer-fields"))) {
		t.Error("bob's answer is not locked after his vote")
	}
	if srv.status(t, id) != hitl.StatusPending {
		t.Fatal("one vote of two decided the question")
	}

	if _, err := srv.Broker.Respond(opsPerson("carol"), id, json.RawMessage(`true`)); err != nil {
		t.Fatal(err)
	}
	got := awaitResult(t, wait)
	if got.Status != string(hitl.StatusAnswered) || string(got.Result.Value) != "true" {
		t.Fatalf("decided: %+v", got)
	}
	bob.waitJS(fmt.Sprintf(`document.querySelector(%s)?.classList.contains("is-resolved") ?? true`, js(card(id))))
}

// TestCardShowsClaims: carol claims an exclusive question; bob's card
// says she is on it and keeps him from answering until she releases it.
func TestCardShowsClaims(t *testing.T) {
	t.Parallel()
	srv := newServerWith(t, serverOptions{auth: true})
	id := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Restart the primary database?",
		"targets": map[string]any{"groups": []string{"ops"}}, "claim": "exclusive"})
	bob := openSignIn(t, srv)
	bob.signIn("bob", bobPassword)
	bob.waitSignedIn("bob")
	bob.waitCard(id)

	if _, err := srv.Broker.Claim(opsPerson("carol"), id, 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	bob.waitCardText(id, "carol is on it")
	if !eval[bool](bob, fmt.Sprintf(`document.querySelector(%s).disabled`, js(card(id)+" fieldset.answer-fields"))) {
		t.Error("bob may answer while carol holds an exclusive claim")
	}
	if _, err := srv.Broker.Release(opsPerson("carol"), id); err != nil {
		t.Fatal(err)
	}
	bob.waitJS(fmt.Sprintf(`!document.querySelector(%s).disabled`, js(card(id)+" fieldset.answer-fields")))

	// Bob claims it himself from his card, and releases it.
	bob.do(chromedp.Click(chromedp.CSS(card(id) + ` .progress-claim-button`)))
	bob.waitCardText(id, "You are on it")
	in, err := srv.Broker.Get(context.Background(), id)
	if err != nil || in.Claim == nil || in.Claim.By != "bob" {
		t.Fatalf("after bob's click: claim %+v, %v", in.Claim, err)
	}
	bob.do(chromedp.Click(chromedp.CSS(card(id) + ` .progress-claim-button`)))
	bob.waitJS(fmt.Sprintf(`!(document.querySelector(%s)?.textContent || "").includes("You are on it")`, js(card(id))))
}
