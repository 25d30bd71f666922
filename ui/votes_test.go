package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/turns"
)

// opsPerson is ctx for a person of the ops group answering on the web.
func opsPerson(name string) context.Context {
	return hitl.WithCaller(context.Background(), hitl.Caller{Name: name, Channel: hitl.ChannelWeb, Role: hitl.RoleResponder, Groups: []string{"ops"}})
}

// TestCardShowsVotes: bob and carol (ops) must both approve. Bob's card
// says where the votes stand, takes his approval, then shows it as his
// and locks the answer; carol's approval, on another channel, decides it.
func TestCardShowsVotes(t *testing.T) {
	turns.Parallel(t)
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

// TestVoteOnItsWayWhenTheQuestionEnds: the question ends while bob's
// vote is on its way (its response held back): carol's veto, or bob's
// own vote completing the quorum. When the vote's response comes, his
// card ends with what the news said; it does not stay on the page waiting
// for the others.
func TestVoteOnItsWayWhenTheQuestionEnds(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	cases := []struct {
		name      string
		consensus map[string]any
		before    string // carol's vote before bob's, if any
		after     string // carol's vote after bob's, if any
		outcome   string
		look      string
	}{
		{"veto", map[string]any{"mode": "quorum", "required": 2, "veto": true}, "", "false", "Vetoed by carol.", "outcome-rejected"},
		{"deciding vote", map[string]any{"mode": "all"}, "true", "", "Approved — chosen by", "outcome-answered"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			turns.Parallel(t)
			srv := newServerWith(t, serverOptions{auth: true})
			id := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Rotate the production signing key?",
				"targets": map[string]any{"groups": []string{"ops"}}, "consensus": c.consensus})
			wait := srv.wait(t, id)
			if c.before != "" {
				if _, err := srv.Broker.Respond(opsPerson("carol"), id, json.RawMessage(c.before)); err != nil {
					t.Fatal(err)
				}
			}
			bob := openSignIn(t, srv, recordOutcomes())
			bob.signIn("bob", bobPassword)
			bob.waitSignedIn("bob")
			bob.waitCard(id)
			release := srv.faults.holdPosts()
			bob.do(chromedp.Click(chromedp.CSS(card(id) + ` button[data-answer="true"]`)))
			if c.after != "" {
				bob.waitCardText(id, "You approved. Your vote is counted")
				if _, err := srv.Broker.Respond(opsPerson("carol"), id, json.RawMessage(c.after)); err != nil {
					t.Fatal(err)
				}
			}
			awaitResult(t, wait)
			bob.waitCardText(id, c.outcome) // heard while the vote's response is held
			release()
			bob.waitJS(fmt.Sprintf(`document.querySelector(%s)?.classList.contains("is-resolved") ?? true`, js(card(id))))
			bob.waitOutcome(id, c.outcome)
			if look := eval[string](bob, fmt.Sprintf(`document.querySelector(%s)?.className || ""`, js(in(id, ".outcome")))); !strings.Contains(look, c.look) {
				t.Errorf("the outcome has the look %q, want %s", look, c.look)
			}
			if text := bob.text(card(id)); strings.Contains(text, "waiting for the others") {
				t.Errorf("the card still waits for the others: %q", text)
			}
		})
	}
}

// TestCardShowsClaims: carol claims an exclusive question; bob's card
// says she is on it and keeps him from answering until she releases it.
func TestCardShowsClaims(t *testing.T) {
	turns.Parallel(t)
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
