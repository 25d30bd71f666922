package ui_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl/internal/turns"
)

// TestWhoAskedAndForWhom: carol (an admin) sees a question targeted at
// bob labelled "for bob", below her own; the project and a coloured
// session tag stand in the header (the compact row too); on an exclusive
// claim "bob is on it" is said once, the locked buttons look disabled,
// and a says why it cannot act.
func TestWhoAskedAndForWhom(t *testing.T) {
	turns.Parallel(t)
	srv := newServerWith(t, serverOptions{auth: true})
	bobs := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Rotate bob's staging API key?",
		"targets": map[string]any{"users": []string{"bob"}}, "timeout": 600, "claim": "exclusive"})
	own := srv.askAction(t, "Bash", map[string]any{"command": "git status"}, map[string]any{"timeout": 900,
		"session_id": "7f3a9c1e-22aa", "metadata": map[string]any{"cwd": "/home/dev/shop"}})
	p := openSignIn(t, srv)
	p.signIn("carol", carolPassword)
	p.waitSignedIn("carol")
	// Her own first, although bob's expires sooner.
	p.waitOrder(own, bobs)
	if got := p.text(in(bobs, ".card-for")); got != "for bob" {
		t.Errorf("bob's question is labelled %q, want for bob", got)
	}
	if n := eval[int](p, fmt.Sprintf(`document.querySelectorAll(%s).length`, js(in(own, ".card-for")))); n != 0 {
		t.Error("carol's own question is labelled for someone else")
	}
	if got := p.text(in(own, ".card-project")); got != "project shop" {
		t.Errorf("the project reads %q, want shop", got)
	}
	if got := p.text(in(own, ".session-tag [aria-hidden]")); got != "7f3a9c" {
		t.Errorf("the session tag reads %q, want 7f3a9c", got)
	}

	// bob claims his question: said once, buttons disabled, a explains.
	if _, err := srv.Broker.Claim(opsPerson("bob"), bobs, 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	p.waitCardText(bobs, "bob is on it")
	if n := strings.Count(p.text(card(bobs)), "is on it"); n != 1 {
		t.Errorf("the card says %d times who is on it: %q", n, p.text(card(bobs)))
	}
	if op := eval[string](p, fmt.Sprintf(`getComputedStyle(document.querySelector(%s)).opacity`, js(in(bobs, ".btn-reject")))); op == "1" {
		t.Error("the locked Reject looks enabled")
	}
	if !eval[bool](p, fmt.Sprintf(`document.querySelector(%s).matches(":disabled")`, js(in(bobs, ".btn-reject")))) {
		t.Error("the locked Reject is not disabled")
	}
	p.do(chromedp.Focus(chromedp.CSS(card(bobs))))
	p.waitFocusedCard(bobs)
	p.do(press("a"))
	p.waitJS(fmt.Sprintf(`(document.querySelector(%s)?.textContent || "").includes("only they may answer")`, js(in(bobs, ".card-error"))))
	srv.stillPending(t, bobs)

	// The compact row keeps the project and the session tag.
	p.do(chromedp.Click(chromedp.CSS("#triage-compact")))
	p.waitJS(`document.getElementById("cards").classList.contains("is-compact")`)
	for _, sel := range []string{".card-project", ".session-tag"} {
		if !eval[bool](p, fmt.Sprintf(`document.querySelector(%s).checkVisibility()`, js(in(own, sel)))) {
			t.Errorf("the compact row hides %s", sel)
		}
	}
}
