package ui_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl/internal/turns"
)

// recordLinked records in window.__linked the id of every card that gets
// the is-linked highlight, which lasts only a moment.
func recordLinked() chromedp.Action[chromedp.Void] {
	return onNewDocument(`(() => {
		window.__linked = [];
		new MutationObserver((records) => {
			for (const r of records) {
				if (r.target.classList?.contains("is-linked")) window.__linked.push(r.target.dataset.id);
			}
		}).observe(document, { subtree: true, attributes: true, attributeFilter: ["class"] });
	})();`)
}

// link is the address Slack's "Open in hitl" button opens for id.
func (p *page) link(id string) string {
	return p.srv.URL + "/?interaction=" + id
}

// TestLinkToPendingQuestion: a link to a pending question, opened before
// signing in, brings the person to that card after the sign-in (not to
// the newest card), highlights it and leaves the address without the
// parameter.
func TestLinkToPendingQuestion(t *testing.T) {
	turns.Parallel(t)
	srv := newServerWith(t, serverOptions{auth: true})
	linked := srv.ask(t, map[string]any{"question": "Roll back the deploy of api-7?"})
	newer := srv.ask(t, map[string]any{"question": "A newer question"})
	p := openSignIn(t, srv, recordLinked())
	p.do(chromedp.Navigate(p.link(linked)))
	p.waitJS(`!document.getElementById("view-login").hidden && document.getElementById("login-form").checkVisibility()`)
	p.signIn("alice", alicePassword)
	p.waitSignedIn("alice")
	p.waitCard(newer)
	p.waitJS(fmt.Sprintf(`document.activeElement?.matches(%s) && window.__linked.includes(%s)`, js(card(linked)), js(linked)))
	if got := eval[string](p, `location.pathname + location.search`); got != "/" {
		t.Errorf("address after following the link = %q, want /", got)
	}
	// The newest card arriving in the same replay does not take the focus.
	p.waitJS(`!document.querySelector(".card.is-linked")`)
	if !eval[bool](p, fmt.Sprintf(`document.activeElement?.matches(%s)`, js(card(linked)))) {
		t.Errorf("the focus left the linked card for %s", eval[string](p, `document.activeElement?.dataset?.id || document.activeElement?.id || ""`))
	}
	if got := p.text("#inbox-notice"); got != "" {
		t.Errorf("notice = %q for a pending question, want none", got)
	}
}

// TestLinkToEndedQuestion: a link to a question that is no longer pending
// (or never was) opens its detail view, which names the question and says
// what became of it; a reload stays there.
func TestLinkToEndedQuestion(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	id := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Rotate the keys?"})
	if status, body := srv.call(t, http.MethodPost, "/api/v1/interactions/"+id+"/respond", map[string]any{"value": true}); status != http.StatusOK {
		t.Fatalf("respond: %d %s", status, body)
	}
	p := openPage(t, srv)
	p.do(chromedp.Navigate(p.link(id)))
	p.waitDetail("Rotate the keys?")
	p.waitDetailText("outcome", "Answered by local via the API")
	if got := eval[string](p, `location.pathname + location.search`); got != "/i/"+id {
		t.Errorf("address after following the link = %q, want /i/%s", got, id)
	}
	if got := p.detailText("outcome"); !strings.Contains(got, "Approve") {
		t.Errorf("outcome %q does not say what was answered", got)
	}
	// A reload shows it again.
	p.do(chromedp.Reload())
	p.waitDetail("Rotate the keys?")
	p.waitDetailText("outcome", "Answered by local via the API")

	p.do(chromedp.Navigate(p.link("no-such-question")))
	p.waitDetail("Question not found")
	if got := eval[string](p, `location.pathname`); got != "/i/no-such-question" {
		t.Errorf("address = %q, want /i/no-such-question", got)
	}
}
