package ui_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl/internal/turns"
)

// TestLayoutAccessibility runs axe-core over the compact list of action
// rows (approve and reject on each, one marked risky) and the two panes
// (one column below 1200 px), at 1280 and 375 px, light and dark, with
// the phone's Filters unfolded too; nothing serious or critical may be
// found.
func TestLayoutAccessibility(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	askMixed(t, srv)
	for _, width := range []int64{1280, 375} {
		for _, scheme := range []string{"light", "dark"} {
			t.Run(fmt.Sprintf("%d-%s", width, scheme), func(t *testing.T) {
				viewport := chromedp.EmulateViewport(width, 800)
				if width < 500 {
					viewport = chromedp.EmulateViewport(width, 812, chromedp.EmulateMobile)
				}
				// Compact and two panes, as the person left them.
				p := openPage(t, srv, viewport, emulateMedia(scheme), onNewDocument(`localStorage.setItem("hitl:triage", JSON.stringify({sort: "deadline", compact: true, panes: false}))`))
				p.waitJS(`document.querySelectorAll("#cards article.card").length === 10 && document.getElementById("cards").classList.contains("is-compact")`)
				p.waitJS(`document.querySelectorAll("#cards .card.type-action .btn-approve").length === 6`)
				p.do(chromedp.Evaluate[chromedp.Void](`document.activeElement?.blur(); window.scrollTo(0, 0)`))
				checkAxe(t, p)

				if width < 500 {
					p.do(chromedp.Evaluate[chromedp.Void](`document.getElementById("triage-filters-btn").click()`))
					p.waitJS(`document.querySelector("#triage-agents .chip")?.checkVisibility()`)
					checkAxe(t, p)
					checkNarrow(t, p)
					// Two panes are not offered on a phone.
					if eval[bool](p, `document.getElementById("triage-panes").checkVisibility()`) {
						t.Error("Two panes is offered at 375 px")
					}
					return
				}
				p.do(chromedp.Evaluate[chromedp.Void](buttonByText("Two panes") + `.click()`))
				p.waitJS(`!!document.querySelector("#pane article.card")`)
				p.do(press("j"), press("j"))
				p.waitJS(`document.activeElement === document.querySelector("#pane article.card")`)
				checkAxe(t, p)
				p.do(chromedp.Evaluate[chromedp.Void](buttonByText("Two panes") + `.click()`))
				p.waitJS(`document.getElementById("pane").hidden`)
			})
		}
	}
}
