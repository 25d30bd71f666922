package ui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl/internal/turns"
)

// recordEdited keeps the text of every card's edited view as it appears
// (the card leaves a few seconds after it ended).
func recordEdited() chromedp.Action[chromedp.Void] {
	return onNewDocument(`(() => {
		window.__edited = {};
		new MutationObserver(() => {
			for (const el of document.querySelectorAll("article.card .edited-view")) {
				window.__edited[el.closest("article.card").dataset.id] = el.textContent;
			}
		}).observe(document, { subtree: true, childList: true });
	})()`)
}

// TestEditedOutcome: after "Edit and approve" the card, the detail view
// and History show what ran — the edited command — and the change from
// what the agent proposed, not the proposed command.
func TestEditedOutcome(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	id := srv.askAction(t, "Bash", map[string]any{"command": "kubectl -n prod rollout restart deploy/api"}, map[string]any{"timeout": 600})
	wait := srv.wait(t, id)
	p := openPage(t, srv, recordOutcomes(), recordEdited())
	p.waitCard(id)
	// e opens Edit with the focus in the command, as text; Ctrl+Enter sends.
	p.do(chromedp.Focus(chromedp.CSS(card(id))))
	p.do(press("e"))
	area := in(id, `.panel-edit textarea`)
	p.waitFocus(id, `.panel-edit textarea`)
	if got := eval[string](p, fmt.Sprintf(`document.querySelector(%s).value`, js(area))); got != "kubectl -n prod rollout restart deploy/api" {
		t.Errorf("the command editor holds %q, want the command as text", got)
	}
	p.typeInto(area, "kubectl -n staging rollout restart deploy/api")
	p.do(ctrlEnter())
	awaitResult(t, wait)
	p.waitJS(fmt.Sprintf(`(window.__edited[%s] || "").includes("Approved with these arguments")`, js(id)))
	edited := eval[string](p, fmt.Sprintf(`window.__edited[%s]`, js(id)))
	for _, want := range []string{"kubectl -n staging rollout restart deploy/api", "Changed from what the agent proposed", "command"} {
		if !strings.Contains(edited, want) {
			t.Errorf("the card's edited view lacks %q: %q", want, edited)
		}
	}
	if os.Getenv("HITL_UPDATE_SCREENSHOTS") != "" {
		if png, err := chromedp.Run(p.ctx, chromedp.Screenshot(chromedp.CSS(card(id)))); err == nil {
			writeDoc(t, "action-edited.png", png)
		}
	}
	if n := eval[int](p, fmt.Sprintf(`document.querySelectorAll(%s).length`, js(in(id, ".edited-view .diff-del, .edited-view del, .edited-view [class*=del]")))); n == 0 && !strings.Contains(edited, "prod") {
		t.Errorf("the card's diff does not show the proposed command: %q", edited)
	}

	// The detail view: what ran, the change, and the original within it.
	p.openDetail(id, "kubectl -n prod rollout restart deploy/api")
	p.waitDetailText("outcome", "Approved with these arguments")
	out := p.detailText("outcome")
	for _, want := range []string{"kubectl -n staging rollout restart deploy/api", "Changed from what the agent proposed", "kubectl -n prod rollout restart deploy/api"} {
		if !strings.Contains(out, want) {
			t.Errorf("the detail view's outcome lacks %q: %q", want, out)
		}
	}
}

// TestEndedWhileTyping: when the agent cancels while the person types a
// reject reason, the card keeps exactly the reason (not the Edit
// arguments beside it), and the focus moves on to the next card, never
// to the page.
func TestEndedWhileTyping(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	first := srv.askAction(t, "Bash", map[string]any{"command": "make deploy ENV=staging VERBOSE=1 RETRIES=3"}, map[string]any{"timeout": 300})
	second := srv.askAction(t, "Bash", map[string]any{"command": "git status"}, map[string]any{"timeout": 900})
	p := openPage(t, srv)
	p.waitOrder(first, second)
	p.click(first, ".btn-reject")
	p.waitFocus(first, `textarea[name="reject-message"]`)
	p.do(chromedp.SendKeys(chromedp.CSS(in(first, `textarea[name="reject-message"]`)), "not on a Friday"))
	if code, data := srv.call(t, http.MethodPost, "/api/v1/interactions/"+first+"/cancel", map[string]any{"reason": "superseded"}); code != http.StatusOK {
		t.Fatalf("cancel: %d %s", code, data)
	}
	p.waitJS(fmt.Sprintf(`!!document.querySelector(%s)`, js(in(first, ".kept-text"))))
	if got := eval[string](p, fmt.Sprintf(`document.querySelector(%s).value`, js(in(first, ".kept-text")))); got != "not on a Friday" {
		t.Errorf("the card kept %q, want the reason as typed", got)
	}
	p.waitFocusedCard(second)
}

// TestVetoOutcome: a 2-of-3 quorum with veto; bob approves, carol
// rejects: bob's card says "Vetoed by carol." in the rejection style, no
// longer waits for the others, and shows the votes.
func TestVetoOutcome(t *testing.T) {
	turns.Parallel(t)
	srv := newServerWith(t, serverOptions{auth: true})
	id := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Rotate the production signing key?",
		"targets": map[string]any{"groups": []string{"ops"}}, "consensus": map[string]any{"mode": "quorum", "required": 2, "veto": true}})
	wait := srv.wait(t, id)
	bob := openSignIn(t, srv, recordOutcomes())
	bob.signIn("bob", bobPassword)
	bob.waitSignedIn("bob")
	bob.waitCard(id)
	bob.do(chromedp.Click(chromedp.CSS(card(id) + ` button[data-answer="true"]`)))
	bob.waitCardText(id, "You approved. Your vote is counted")
	if _, err := srv.Broker.Respond(opsPerson("carol"), id, json.RawMessage(`false`)); err != nil {
		t.Fatal(err)
	}
	awaitResult(t, wait)
	bob.waitOutcome(id, "Vetoed by carol.")
	look := eval[string](bob, fmt.Sprintf(`document.querySelector(%s)?.className || ""`, js(in(id, ".outcome"))))
	if !strings.Contains(look, "outcome-rejected") {
		t.Errorf("the veto's outcome has the look %q, want outcome-rejected", look)
	}
	text := bob.text(card(id))
	if strings.Contains(text, "waiting for the others") {
		t.Errorf("the vetoed card still waits for the others: %q", text)
	}
	if !strings.Contains(text, "you approved, carol rejected") {
		t.Errorf("the vetoed card does not show the votes: %q", text)
	}
	if os.Getenv("HITL_UPDATE_SCREENSHOTS") != "" {
		if png, err := chromedp.Run(bob.ctx, chromedp.Screenshot(chromedp.CSS(card(id)))); err == nil {
			writeDoc(t, "veto.png", png)
		}
	}
}
