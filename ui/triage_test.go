package ui_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/hitl-sh/hitl/internal/turns"
)

// cardOrder returns the ids of the cards on the page, top to bottom.
func (p *page) cardOrder() []string {
	p.t.Helper()
	return eval[[]string](p, `[...document.querySelectorAll("#cards article.card")].map((a) => a.dataset.id)`)
}

// waitOrder waits until the page shows exactly the cards want, in order.
func (p *page) waitOrder(want ...string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf(`JSON.stringify([...document.querySelectorAll("#cards article.card")].map((a) => a.dataset.id)) === JSON.stringify(%s)`, jsonList(want)))
}

// chip clicks the filter chip of group (agents or types) whose label
// starts with label.
func (p *page) chip(group, label string) {
	p.t.Helper()
	p.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`[...document.querySelectorAll("#triage-%s .chip")].find((c) => c.querySelector(".chip-label").textContent === %s).click()`, group, js(label))))
}

// press types one key with no modifier, as a person would.
func press(key string) chromedp.Action[chromedp.Void] {
	return chromedp.KeyEvent(key)
}

// TestTriageOrderFiltersAndSearch: deadline soonest first by default;
// Newest puts the latest on top but keeps a question expiring within five
// minutes pinned above; the agent and type chips carry their counts and
// filter; the search matches the context too.
func TestTriageOrderFiltersAndSearch(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	late := srv.ask(t, map[string]any{"question": "Name the release", "timeout": 3 * 3600, "source_agent": "writer"})
	soon := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Restart the database?", "timeout": 4 * 60, "source_agent": "ops-bot"})
	mid := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Merge the hotfix?", "context": "Touches the **billing** service.", "timeout": 3600, "source_agent": "ops-bot"})
	newest := srv.ask(t, map[string]any{"question": "Summarise the incident", "timeout": 2 * 3600, "source_agent": "writer"})
	p := openPage(t, srv)
	p.waitOrder(soon, mid, newest, late)
	p.waitJS(`document.querySelectorAll("#triage-agents .chip").length === 2 && document.querySelectorAll("#triage-types .chip").length === 2`)
	chips := eval[[]string](p, `[...document.querySelectorAll("#triage .chip")].map((c) => c.textContent)`)
	if want := []string{"ops-bot2", "writer2", "Approval2", "Text2"}; !slices.Equal(chips, want) {
		t.Errorf("chips %q, want %q", chips, want)
	}

	p.setSelect("#triage-sort", "newest")
	p.waitOrder(soon, newest, mid, late)

	// An agent chip, then a type chip on top of it.
	p.chip("agents", "writer")
	p.waitOrder(newest, late)
	if got := eval[string](p, `document.querySelector("#triage-agents [aria-pressed=true]").textContent`); got != "writer2" {
		t.Errorf("pressed agent chip %q, want writer2", got)
	}
	p.chip("agents", "writer")
	p.chip("types", "Approval")
	p.waitOrder(soon, mid)
	p.chip("types", "Approval")
	p.waitOrder(soon, newest, mid, late)

	// The search reaches the context; nothing matching says so.
	p.typeInto("#triage-q", "billing")
	p.waitOrder(mid)
	p.typeInto("#triage-q", "zebra")
	p.waitOrder()
	p.waitJS(`!document.getElementById("inbox-empty").hidden && document.getElementById("inbox-empty").textContent.includes("Nothing matches")`)
	p.do(chromedp.Focus(chromedp.CSS("#triage-q")), chromedp.KeyEvent(kb.Escape))
	p.waitOrder(soon, newest, mid, late)

	// A question asked while filtered to writer shows only if it matches.
	p.chip("agents", "writer")
	p.waitOrder(newest, late)
	other := srv.ask(t, map[string]any{"question": "Scale the workers?", "timeout": 600, "source_agent": "ops-bot"})
	mine := srv.ask(t, map[string]any{"question": "Draft the changelog", "timeout": 5 * 3600, "source_agent": "writer"})
	p.waitOrder(mine, newest, late)
	if slices.Contains(p.cardOrder(), other) {
		t.Error("a question from another agent shows while filtered to writer")
	}
	p.waitJS(`document.getElementById("inbox-count").textContent === "6"`)
}

// TestCompactByKeyboard: the compact list shows one row per card; j and
// k move between cards, Enter opens and closes one, and the approval's
// buttons answer from the row.
func TestCompactByKeyboard(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	first := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Ship build 88?", "context": "All checks passed.", "timeout": 600})
	second := srv.ask(t, map[string]any{"question": "Why did the canary fail?", "context": "Logs attached.", "timeout": 1200})
	wait := srv.wait(t, first)
	p := openPage(t, srv)
	p.waitOrder(first, second)
	p.waitJS(fmt.Sprintf(`document.activeElement?.dataset?.id === %s`, js(first)))
	// To the Compact button by keyboard only.
	p.do(chromedp.Focus(chromedp.CSS("#triage-compact")), chromedp.KeyEvent(kb.Enter))
	p.waitJS(`document.getElementById("cards").classList.contains("is-compact")`)
	rowHeight := eval[float64](p, fmt.Sprintf(`document.querySelector(%s).getBoundingClientRect().height`, js(card(second))))
	if rowHeight > 90 {
		t.Errorf("a compact text card is %.0f px high, want one row", rowHeight)
	}
	if eval[bool](p, fmt.Sprintf(`document.querySelector(%s).checkVisibility()`, js(card(second)+" textarea"))) {
		t.Error("a closed compact card shows its text box")
	}
	p.do(press("j"))
	p.waitJS(fmt.Sprintf(`document.activeElement?.dataset?.id === %s`, js(first)))
	p.do(press("j"))
	p.waitJS(fmt.Sprintf(`document.activeElement?.dataset?.id === %s`, js(second)))
	p.do(chromedp.KeyEvent(kb.Enter))
	p.waitJS(fmt.Sprintf(`document.querySelector(%s).checkVisibility()`, js(card(second)+" textarea")))
	if got := eval[string](p, fmt.Sprintf(`document.querySelector(%s).getAttribute("aria-expanded")`, js(card(second)+" .card-toggle"))); got != "true" {
		t.Errorf("the open card's toggle says aria-expanded=%q", got)
	}
	p.do(chromedp.KeyEvent(kb.Enter))
	p.waitJS(fmt.Sprintf(`!document.querySelector(%s).checkVisibility()`, js(card(second)+" textarea")))
	p.do(press("k"))
	p.waitJS(fmt.Sprintf(`document.activeElement?.dataset?.id === %s`, js(first)))
	p.do(press("a"))
	assertValue(t, awaitResult(t, wait), `true`)
	// The focus went on to the next card before the answered one was
	// disabled.
	p.waitJS(fmt.Sprintf(`document.activeElement?.dataset?.id === %s`, js(second)))
}
