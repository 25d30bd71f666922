package ui_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl/internal/turns"
)

// askThirty asks 30 questions: the five types five times over, four
// approvals from deploy-bot and one with a code block in its context, all
// due in hours (see askOneOfEach).
func askThirty(t *testing.T, srv *hitlServer) []string {
	t.Helper()
	var ids []string
	for range 5 {
		ids = append(ids, askOneOfEach(t, srv)...)
	}
	for i := range 4 {
		ids = append(ids, srv.ask(t, map[string]any{"interaction_type": "approval",
			"question": fmt.Sprintf("Promote canary %d to the whole fleet?", i+1), "timeout": 3600 * (i + 1), "source_agent": "deploy-bot"}))
	}
	ids = append(ids, srv.ask(t, map[string]any{
		"interaction_type": "approval",
		"question":         "Run the migration on the orders database?",
		"context":          "The script:\n\n```\npsql \"$ORDERS_URL\" -f migrations/0042_add_fulfilment_state_to_orders_and_backfill_from_shipments.sql --single-transaction\n```\n\nIt locks the table for about 20 seconds.",
		"timeout":          4 * 3600,
		"source_agent":     "db-agent",
		"session_id":       "sess-7f3a",
		"metadata":         map[string]any{"ticket": "OPS-1432"},
	}))
	return ids
}

// TestTriageAccessibility runs axe-core on an inbox of 30 cards at 1280
// and 375 px, light and dark, in the full and the compact list; with
// HITL_UPDATE_SCREENSHOTS=1 it writes the compact triage screenshot.
func TestTriageAccessibility(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	askThirty(t, srv)
	for _, width := range []int64{1280, 375} {
		for _, scheme := range []string{"light", "dark"} {
			t.Run(fmt.Sprintf("%d-%s", width, scheme), func(t *testing.T) {
				viewport := chromedp.EmulateViewport(width, 900)
				if width < 500 {
					viewport = chromedp.EmulateViewport(width, 812, chromedp.EmulateMobile)
				}
				p := openPage(t, srv, viewport, emulateMedia(scheme))
				p.waitJS(`document.querySelectorAll("#cards article.card").length === 30 && document.getElementById("inbox-count").textContent === "30"`)
				p.waitJS(`document.querySelectorAll("#triage-agents .chip").length >= 2`)
				p.do(chromedp.Evaluate[chromedp.Void](`document.activeElement?.blur(); window.scrollTo(0, 0)`))
				// The code block is a focusable, labelled region.
				if got := eval[string](p, `(() => { const pre = document.querySelector(".card pre"); return pre.tabIndex + " " + pre.getAttribute("role") + " " + pre.getAttribute("aria-label"); })()`); got != "0 region Code: Run the migration on the orders database?" {
					t.Errorf("code block: %q, want 0 region Code: and the question", got)
				}
				checkAxe(t, p)
				if width < 500 {
					checkNarrow(t, p)
				}
				p.do(chromedp.Click(chromedp.CSS("#triage-compact")))
				p.waitJS(`document.getElementById("cards").classList.contains("is-compact")`)
				checkAxe(t, p)
				if width < 500 {
					checkNarrow(t, p)
				}
				if os.Getenv("HITL_UPDATE_SCREENSHOTS") != "" && scheme == "light" {
					png, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
					if err != nil {
						t.Fatalf("screenshot: %v", err)
					}
					name := "inbox-compact.png"
					if width < 500 {
						name = "inbox-compact-phone.png"
					}
					writeDoc(t, name, png)
				}
				// Back to the full list for the next run (the choice is kept).
				p.do(chromedp.Click(chromedp.CSS("#triage-compact")))
				p.waitJS(`!document.getElementById("cards").classList.contains("is-compact")`)
			})
		}
	}
}
