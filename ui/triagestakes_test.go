package ui_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl/internal/turns"
)

// recordAnnouncements keeps in window.__said everything the polite
// announcer says.
func (p *page) recordAnnouncements() {
	p.t.Helper()
	p.do(chromedp.Evaluate[chromedp.Void](`window.__said = []; new MutationObserver(() => {
		const t = document.getElementById("announcer").textContent; if (t) window.__said.push(t);
	}).observe(document.getElementById("announcer"), {childList: true, characterData: true, subtree: true})`))
}

// TestStakesAndSummary: one summary on load instead of one announcement
// per card; Use default answers with the default; a pre-selected choice
// is marked default; the agent, session and metadata are on the card; a
// short deadline is spoken at half-time.
func TestStakesAndSummary(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	text := srv.ask(t, map[string]any{"question": "Release title?", "default_response": "info", "on_timeout": "default", "timeout": 3600,
		"session_id": "sess-42", "metadata": map[string]any{"ticket": "OPS-7"}})
	choice := srv.ask(t, map[string]any{"interaction_type": "single_choice", "question": "Which region?", "default_response": "eu",
		"options": []map[string]any{{"key": "us", "label": "US"}, {"key": "eu", "label": "EU"}}, "timeout": 1800})
	srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Drain node 3?", "timeout": 200})
	wait := srv.wait(t, text)
	p := openPage(t, srv)
	p.waitJS(`document.getElementById("announcer").textContent === "3 waiting; 1 expires within 5 minutes."`)
	p.recordAnnouncements()

	p.waitCardText(text, "the agent gets “info”")
	if got := p.text(card(choice) + " .choice-default"); got != "default" {
		t.Errorf("the default choice is marked %q", got)
	}
	if got := eval[string](p, fmt.Sprintf(`document.querySelector(%s).closest("label").querySelector(".choice-label").textContent`, js(card(choice)+" .choice-default"))); got != "EU" {
		t.Errorf("the choice marked default is %q, want EU", got)
	}
	if got := p.text(card(text) + " .card-head"); !strings.Contains(got, "test-agent") || !strings.Contains(got, "sess-42") {
		t.Errorf("card head %q lacks the agent or the session", got)
	}
	p.do(chromedp.Click(chromedp.CSS(card(text) + " .card-details summary")))
	p.waitCardText(text, "OPS-7")

	p.do(chromedp.Click(chromedp.CSS(card(text) + " .stakes-use")))
	assertValue(t, awaitResult(t, wait), `"info"`)

	short := srv.ask(t, map[string]any{"question": "Quick: which port?", "timeout": 12})
	p.waitCard(short)
	p.waitJS(`window.__said.some((s) => s.includes("“Quick: which port?” expires in"))`)
	if got := eval[bool](p, fmt.Sprintf(`document.querySelector(%s).disabled`, js(card(short)+" fieldset"))); got {
		t.Error("the warning came after the deadline")
	}
}
