package ui_test

import (
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/hitl-sh/hitl/internal/turns"
)

// focusedCard is the id of the card holding the focus, or "".
func (p *page) focusedCard() string {
	p.t.Helper()
	return eval[string](p, `document.activeElement?.closest?.("article.card")?.dataset.id || ""`)
}

// waitFocusedCard waits until the card of id holds the focus.
func (p *page) waitFocusedCard(id string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf(`document.activeElement?.closest?.("article.card")?.dataset.id === %s`, js(id)))
}

// TestShortcuts: j/k move, a approves, r asks for a second r before it
// rejects, / focuses the search, ? shows the shortcuts; none fires while
// typing; the focus lands on the next card before the answered one is
// disabled; the buttons carry their question and their shortcut.
func TestShortcuts(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	one := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Deploy build 1432 to production?", "timeout": 600})
	two := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Rotate the signing key?", "timeout": 900})
	three := srv.ask(t, map[string]any{"question": "Anything to add to the notes?", "timeout": 1200})
	waitOne, waitTwo := srv.wait(t, one), srv.wait(t, two)
	p := openPage(t, srv)
	p.waitOrder(one, two, three)
	p.waitFocusedCard(one)
	if got := eval[string](p, fmt.Sprintf(`document.querySelector(%s).getAttribute("aria-label")`, js(card(one)+" .btn-approve"))); got != "Approve: Deploy build 1432 to production?" {
		t.Errorf("the Approve button is named %q", got)
	}
	if got := eval[string](p, fmt.Sprintf(`document.querySelector(%s).getAttribute("aria-keyshortcuts")`, js(card(one)+" .btn-reject"))); got != "R" {
		t.Errorf("the Reject button's aria-keyshortcuts = %q, want R", got)
	}

	// Shortcuts never fire while typing.
	p.do(press("j"), press("j"))
	p.waitFocusedCard(three)
	// The text box is clicked once its card has scrolled into view, and
	// the keys typed once it has the focus. In one clean-clone CI run under
	// load the box stayed empty while the focus ended on its card: a click
	// that misses the box leaves the focus on the card, where k and j move
	// it away and back (the likely cause, not seen again). A person whose
	// click missed clicks again, and so does the test, at most three times.
	textBox := card(three) + " textarea"
	for try := 1; ; try++ {
		p.waitStill(textBox)
		p.do(chromedp.Click(chromedp.CSS(textBox)))
		focused, err := chromedp.Run(p.ctx, chromedp.Poll[bool](fmt.Sprintf(`document.activeElement === document.querySelector(%s)`, js(textBox)),
			chromedp.WithPollingInterval(40*time.Millisecond), chromedp.WithPollingTimeout(3*time.Second)))
		if err == nil && focused {
			break
		}
		if try == 3 {
			t.Fatalf("the text box does not have the focus after three clicks on it (the focus is on %s): %v", p.focusName(), err)
		}
	}
	p.do(chromedp.KeyEvent("kja"))
	if got := p.focusedCard(); got != three {
		t.Fatalf("typing j and k in a text box moved the focus to %q", got)
	}
	if got := eval[string](p, fmt.Sprintf(`document.querySelector(%s).value`, js(card(three)+" textarea"))); got != "kja" {
		t.Errorf("the text box holds %q, want kja", got)
	}
	p.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%s).focus()`, js(card(three)))))
	p.do(press("k"))
	p.waitFocusedCard(two)

	// r once only asks; r again rejects; the focus moves on first.
	p.do(press("r"))
	p.waitJS(fmt.Sprintf(`document.querySelector(%s).classList.contains("is-confirming")`, js(card(two))))
	p.waitJS(`document.getElementById("announcer").textContent.includes("Press r again")`)
	srv.stillPending(t, two)
	p.do(press("r"))
	assertValue(t, awaitResult(t, waitTwo), `false`)
	p.waitCardText(two, "Answer sent.")
	if got := p.focusedCard(); got != three {
		t.Errorf("after answering, the focus is on %q, want the next card %q", got, three)
	}

	p.do(press("k"))
	p.waitFocusedCard(one)
	p.do(press("a"))
	assertValue(t, awaitResult(t, waitOne), `true`)
	p.waitFocusedCard(three)

	p.do(press("/"))
	p.waitJS(`document.activeElement.id === "triage-q"`)
	p.do(chromedp.KeyEvent("?"))
	if eval[bool](p, `document.getElementById("keys-dialog").open`) {
		t.Error("? typed in the search opened the shortcuts")
	}
	p.do(chromedp.Evaluate[chromedp.Void](`document.activeElement.value = ""; document.activeElement.blur()`))
	p.do(chromedp.KeyEvent("?"))
	p.waitJS(`document.getElementById("keys-dialog").open && document.getElementById("keys-dialog").textContent.includes("Next / previous question")`)
	p.do(chromedp.KeyEvent(kb.Escape))
	p.waitJS(`!document.getElementById("keys-dialog").open`)
}

// TestNewQuestionWhileReading: a question that arrives above the screen
// while the person reads further down neither scrolls the page nor takes
// the focus; a pill says so and brings them to it.
func TestNewQuestionWhileReading(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	var ids []string
	for i := range 12 {
		ids = append(ids, srv.ask(t, map[string]any{
			"question": fmt.Sprintf("Review change %d", i),
			"context":  strings.Repeat("A paragraph that makes the card tall. ", 6),
			"timeout":  3600 + 60*i,
		}))
	}
	p := openPage(t, srv, chromedp.EmulateViewport(1100, 700))
	p.waitOrder(ids...)
	p.waitFocusedCard(ids[0]) // the summary on load has run
	reading := ids[6]
	p.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%s).focus({preventScroll: true}); document.querySelector(%s).scrollIntoView({block: "start"}); window.scrollBy(0, -20)`, js(card(reading)), js(card(reading)))))
	// Still for two frames: nothing else is moving the page.
	top := fmt.Sprintf(`document.querySelector(%s).getBoundingClientRect().top`, js(card(reading)))
	p.waitJS(fmt.Sprintf(`window.scrollY > 200 && new Promise((ok) => { const a = %s; requestAnimationFrame(() => requestAnimationFrame(() => ok(a === %s))); })`, top, top))
	before := eval[float64](p, top)

	urgent := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Stop the runaway job?", "timeout": 120})
	p.waitJS(`!document.getElementById("new-pill").hidden`)
	if got := p.cardOrder()[0]; got != urgent {
		t.Errorf("the top card is %q, want the new urgent one", got)
	}
	// Read once the page is still for two frames (the inbox settles the
	// new card's height and its own scroll in the frames after it).
	p.waitJS(fmt.Sprintf(`new Promise((ok) => { const a = %s; requestAnimationFrame(() => requestAnimationFrame(() => ok(a === %s))); })`, top, top))
	after := eval[float64](p, top)
	if math.Abs(after-before) > 1 {
		t.Errorf("the card being read moved from %.0f to %.0f px", before, after)
	}
	if got := p.focusedCard(); got != reading {
		t.Errorf("the focus moved to %q", got)
	}
	if got := eval[string](p, `document.querySelector("#new-pill .pill-text").textContent`); got != "1 new question" {
		t.Errorf("pill %q", got)
	}
	p.waitJS(`document.getElementById("announcer").textContent.includes("New question from test-agent: Stop the runaway job?")`)
	p.do(chromedp.Click(chromedp.CSS("#new-pill")))
	p.waitFocusedCard(urgent)
	p.waitJS(`document.getElementById("new-pill").hidden && window.scrollY < 5`)
}

// TestOutcomesKeepInformation: a question answered elsewhere says what
// was chosen and by whom; a cancelled one the agent's reason; an expired
// one what the agent got; text typed into a card that ends stays,
// read-only with Copy, until dismissed.
func TestOutcomesKeepInformation(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	choice := srv.ask(t, map[string]any{"interaction_type": "single_choice", "question": "Ship or hold?",
		"options": []map[string]any{{"key": "ship", "label": "Ship"}, {"key": "hold", "label": "Hold"}}, "timeout": 600})
	cancelled := srv.ask(t, map[string]any{"question": "Which mirror?", "timeout": 700})
	p := openPage(t, srv)
	p.waitCard(cancelled)
	// Short deadlines count from here: the browser may take seconds to
	// start.
	typed := srv.ask(t, map[string]any{"question": "Describe the outage", "timeout": 8})
	defaulted := srv.ask(t, map[string]any{"question": "Release title?", "default_response": "info", "on_timeout": "default", "timeout": 4})
	p.waitCard(typed)
	p.do(chromedp.Click(chromedp.CSS(card(typed) + " textarea")))
	p.do(chromedp.KeyEvent("The cache node ran out of memory"))

	srv.call(t, http.MethodPost, "/api/v1/interactions/"+choice+"/respond", map[string]any{"value": "hold"})
	p.waitCardText(choice, "Hold — chosen by local via the API.")
	srv.call(t, http.MethodPost, "/api/v1/interactions/"+cancelled+"/cancel", map[string]any{"reason": "found a safer plan"})
	p.waitCardText(cancelled, "Cancelled by the agent: found a safer plan")

	p.waitCardText(defaulted, "Expired at ")
	p.waitCardText(defaulted, "the agent got “info”")
	p.waitCardText(typed, "Expired at ")
	kept := card(typed) + " .kept-text"
	p.waitJS(fmt.Sprintf(`document.querySelector(%s)?.readOnly && document.querySelector(%s).value === "The cache node ran out of memory"`, js(kept), js(kept)))
	// The ended cards without typed text collapse into the strip; the
	// one with it stays until dismissed.
	p.waitCardGone(choice)
	p.waitJS(`document.querySelector("#ended .ended-list").textContent.includes("Cancelled by the agent: found a safer plan")`)
	p.waitCard(typed)
	p.do(chromedp.Click(chromedp.CSS(card(typed) + " .kept-copy")))
	p.waitJS(`document.getElementById("announcer").textContent.includes("copied") || document.getElementById("announcer").textContent.includes("selected")`)
	p.do(chromedp.Click(chromedp.CSS(card(typed) + " .kept .btn-quiet")))
	p.waitCardGone(typed)
}
