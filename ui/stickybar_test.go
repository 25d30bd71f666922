package ui_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl/internal/turns"
)

// TestStickyActionsOnPhones: on a 375 px phone a card's action bar stays
// on screen while a long context scrolls past: with the card's top above
// the screen and its end below it, the bar's box is inside the viewport,
// for an approval and for a free-text answer alike.
func TestStickyActionsOnPhones(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	long := strings.Repeat("The migration rewrites every row of the orders table, one batch at a time, and keeps a copy until the end.\n\n", 40)
	ids := []string{
		srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Run the orders migration?", "context": long, "timeout": 3 * 3600}),
		srv.ask(t, map[string]any{"interaction_type": "free_text", "question": "What should the notice say?", "context": long, "timeout": 3 * 3600}),
	}
	p := openPage(t, srv, chromedp.EmulateViewport(375, 812, chromedp.EmulateMobile), emulateMedia("light"))
	for _, id := range ids {
		p.waitCard(id)
		p.click(id, ".context-more") // the whole context
		p.waitJS(fmt.Sprintf(`!document.querySelector(%s).classList.contains("is-clamped")`, js(in(id, ".context"))))
		// The middle of the card's context at the middle of the screen.
		p.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
			document.activeElement?.blur();
			const c = document.querySelector(%s).getBoundingClientRect();
			window.scrollBy(0, c.top + c.height / 2 - innerHeight / 2);
		})()`, js(in(id, ".context")))))
		got := eval[map[string]float64](p, fmt.Sprintf(`(() => {
			const card = document.querySelector(%s).getBoundingClientRect();
			const bar = document.querySelector(%s).getBoundingClientRect();
			return {cardTop: card.top, cardBottom: card.bottom, barTop: bar.top, barBottom: bar.bottom, height: innerHeight};
		})()`, js(card(id)), js(in(id, ".actions"))))
		if got["cardTop"] >= 0 || got["cardBottom"] <= got["height"] {
			t.Fatalf("card %s spans %v..%v of a %v px screen; the test wants its top above and its end below", id, got["cardTop"], got["cardBottom"], got["height"])
		}
		if got["barTop"] < 0 || got["barBottom"] > got["height"] {
			t.Errorf("card %s: its action bar is at %v..%v, outside the %v px screen, while its context scrolls", id, got["barTop"], got["barBottom"], got["height"])
		}
	}
}
