package ui_test

import (
	"fmt"
	"net/http"
	"os"
	"testing"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl/internal/turns"
)

// invoiceEdit is the Edit of the action card in the screenshots.
var invoiceEdit = map[string]any{
	"file_path": "/home/dev/shop/internal/billing/invoice.go",
	"old_string": "func (inv *Invoice) Total() Money {\n" +
		"\tsum := inv.Subtotal()\n" +
		"\treturn sum.Add(inv.Tax())\n" +
		"}\n",
	"new_string": "func (inv *Invoice) Total() Money {\n" +
		"\tsum := inv.Subtotal()\n" +
		"\tif inv.Discount != nil {\n" +
		"\t\tsum = sum.Sub(inv.Discount.Of(sum))\n" +
		"\t}\n" +
		"\treturn sum.Add(inv.TaxOn(sum))\n" +
		"}\n",
}

// askActions asks an action of each kind the card draws: a file edit (a
// diff), a shell command (a code block) and another tool (keys and
// values); it returns their ids in that order, which is the page's (the
// newest on top).
func askActions(t *testing.T, srv *hitlServer) []string {
	t.Helper()
	reqs := actionRequests()
	ids := make([]string, len(reqs))
	for i := len(reqs) - 1; i >= 0; i-- {
		ids[i] = srv.ask(t, reqs[i])
	}
	return ids
}

// actionRequests are the requests askActions makes.
func actionRequests() []map[string]any {
	return []map[string]any{
		{
			"interaction_type": "action",
			"question":         "Apply the discount before tax in Invoice.Total?",
			"action":           map[string]any{"name": "Edit", "args": invoiceEdit},
			"source_agent":     "claude-code",
			"session_id":       "a3f2c1d8-9b1e-4c57-8d0a-5e4f7b2c9d10",
			"timeout":          15 * 60,
		},
		{
			"interaction_type": "action",
			"action": map[string]any{"name": "Bash", "description": "Apply the reviewed plan to production",
				"args": map[string]any{"command": "terraform apply -auto-approve -var-file=prod.tfvars", "timeout": 600000}},
			"source_agent": "claude-code",
			"session_id":   "a3f2c1d8-9b1e-4c57-8d0a-5e4f7b2c9d10",
			"timeout":      10 * 60,
		},
		{
			"interaction_type": "action",
			"question":         "Send the renewal reminder to Globex?",
			"action": map[string]any{"name": "send_email", "args": map[string]any{
				"to":      "billing@globex.example",
				"subject": "Your subscription renews on 1 July",
				"body":    "Hello,\n\nyour Team plan renews on 1 July for 12 seats at €480 a month.\nReply to this email to change the number of seats before then.\n\nThanks,\nthe Shop team",
				"cc":      []string{"accounts@shop.example"},
				"retries": 3,
			}},
			"decisions":    []string{"approve", "reject"},
			"source_agent": "mailer",
			"timeout":      3600,
		},
	}
}

// TestActionLook runs axe-core on action cards, with each of their panels
// open, and on the rules dialog, in light and dark, at 1280 and 375 px;
// at 375 px nothing may stick out. With HITL_UPDATE_SCREENSHOTS=1 it
// writes docs/action-card-light.png and docs/action-card-dark.png.
func TestActionLook(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	for _, r := range []map[string]any{
		{"effect": "allow", "source_agent": "claude-code", "action_name": "Bash", "match": map[string]any{"arg": "command", "prefix": "git status"}, "ttl_seconds": 86400},
		{"effect": "deny", "source_agent": "*", "action_name": "Write", "match": map[string]any{"arg": "file_path", "glob": "/etc/**"}, "message": "never in /etc"},
	} {
		if code, body := srv.call(t, http.MethodPost, "/api/v1/rules", r); code != http.StatusCreated {
			t.Fatalf("create rule: %d %s", code, body)
		}
	}
	ids := askActions(t, srv)
	for _, width := range []int64{1280, 375} {
		for _, scheme := range []string{"light", "dark"} {
			t.Run(fmt.Sprintf("%d-%s", width, scheme), func(t *testing.T) {
				viewport := chromedp.EmulateViewport(width, 900)
				if width < 500 {
					viewport = chromedp.EmulateViewport(width, 812, chromedp.EmulateMobile)
				}
				p := openPage(t, srv, viewport, emulateMedia(scheme))
				for _, id := range ids {
					p.waitCard(id)
				}
				p.waitJS(`document.activeElement === document.querySelector(".card")`)
				p.do(chromedp.Evaluate[chromedp.Void](`document.activeElement.blur(); window.scrollTo(0, 0)`))
				check := func(what string) {
					t.Helper()
					t.Logf("checking %s", what)
					checkAxe(t, p)
					if width < 500 {
						checkNarrow(t, p)
					}
				}
				check("the cards")
				// Every panel of the first card, one after the other.
				for _, b := range []string{"btn-always", "btn-edit", "btn-reject", "btn-respond"} {
					p.do(chromedp.Click(chromedp.CSS(card(ids[0]) + " ." + b)))
					p.waitJS(fmt.Sprintf(`document.querySelector(%s).contains(document.activeElement)`, js(card(ids[0])+" .action-panel:not([hidden])")))
					check(b)
					p.do(chromedp.Click(chromedp.CSS(card(ids[0]) + " .btn-cancel")))
				}
				// The folded values of the third, opened.
				p.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelectorAll(%s).forEach(d => d.open = true)`, js(card(ids[2])+" details"))))
				check("the folded values, open")
				p.openRules()
				check("the rules dialog")
			})
		}
	}
}

// TestActionCard checks one action card, a file edit, with axe-core in
// light and dark; with HITL_UPDATE_SCREENSHOTS=1 it writes
// docs/action-card-light.png and docs/action-card-dark.png.
func TestActionCard(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	id := srv.ask(t, actionRequests()[0])
	for _, scheme := range []string{"light", "dark"} {
		t.Run(scheme, func(t *testing.T) {
			p := openPage(t, srv, chromedp.EmulateViewport(1280, 900), emulateMedia(scheme))
			p.waitCard(id)
			// The new card takes the focus; the screenshot shows it at rest.
			p.waitJS(`document.activeElement === document.querySelector(".card")`)
			p.do(chromedp.Evaluate[chromedp.Void](`document.activeElement.blur(); window.scrollTo(0, 0)`))
			checkAxe(t, p)
			if os.Getenv("HITL_UPDATE_SCREENSHOTS") != "" {
				shootCard(t, p, id, fmt.Sprintf("action-card-%s.png", scheme))
			}
		})
	}
}

// shootCard writes a screenshot of the card of id, with a margin, to
// docs/name.
func shootCard(t *testing.T, p *page, id, name string) {
	t.Helper()
	box := eval[map[string]float64](p, fmt.Sprintf(`(() => { const r = document.querySelector(%s).getBoundingClientRect();
		return {x: r.x + scrollX, y: r.y + scrollY, w: r.width, h: r.height}; })()`, js(card(id))))
	const margin = 14
	yes := true
	shot, err := chromedp.Call(p.ctx, cdppage.CaptureScreenshot, cdppage.CaptureScreenshotParams{
		Clip:                  &cdppage.Viewport{X: box["x"] - margin, Y: box["y"] - margin, Width: box["w"] + 2*margin, Height: box["h"] + 2*margin, Scale: 1},
		CaptureBeyondViewport: &yes,
		FromSurface:           &yes,
	})
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	writeDoc(t, name, shot.Data)
}
