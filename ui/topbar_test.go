package ui_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl/internal/turns"
)

// topBarRows counts the rows the top bar's visible controls take (their
// distinct vertical middles, a few px apart at most within a row).
const topBarRows = `(() => {
	const items = [...document.querySelectorAll("#topbar .brand, #topbar .tab, #topbar-end > *, #account > *")]
		.filter((e) => e.checkVisibility() && e.getBoundingClientRect().width > 0);
	const mids = items.map((e) => { const r = e.getBoundingClientRect(); return (r.top + r.bottom) / 2; }).sort((a, b) => a - b);
	let rows = 0, last = -100;
	for (const m of mids) { if (m - last > 12) rows++; last = m; }
	return rows;
})()`

// TestTopBar: signed in as an admin with Slack, email and Web Push on,
// the top bar keeps to one row at 1280 px and two on a 375 px phone,
// shows the person's name and Sign out, offers exactly one notifications
// control (one bell) on the phone, and, sticky, never covers the card
// that j moves to.
func TestTopBar(t *testing.T) {
	turns.Parallel(t)
	srv := newServerWith(t, serverOptions{auth: true, push: true, email: true})
	for i := range 12 {
		srv.ask(t, map[string]any{"interaction_type": "approval", "question": fmt.Sprintf("Restart worker %d?", i+1), "timeout": 3 * 3600, "source_agent": "ops-bot"})
	}
	for _, c := range []struct {
		width, height int64
		rows          int
	}{{1280, 800, 1}, {375, 812, 2}} {
		t.Run(fmt.Sprint(c.width), func(t *testing.T) {
			viewport := chromedp.EmulateViewport(c.width, c.height)
			if c.width < 500 {
				viewport = chromedp.EmulateViewport(c.width, c.height, chromedp.EmulateMobile)
			}
			p := openSignIn(t, srv, viewport, emulateMedia("light"))
			p.signIn("carol", carolPassword)
			p.waitSignedIn("carol")
			p.waitJS(`!document.getElementById("slack-btn").hidden && document.getElementById("push")?.checkVisibility() && document.getElementById("email-btn")?.checkVisibility()`)
			p.waitJS(`document.querySelectorAll("#cards article.card").length === 12`)
			if !eval[bool](p, `document.getElementById("account-name").checkVisibility() && document.getElementById("sign-out").checkVisibility()`) {
				t.Error("the name or Sign out is not visible")
			}
			if got := eval[int](p, topBarRows); got > c.rows {
				t.Errorf("top bar takes %d rows at %d px; want at most %d", got, c.width, c.rows)
			}
			if c.width < 500 {
				bells := eval[[]string](p, `[...document.querySelectorAll("#topbar button")].filter((b) => b.checkVisibility() && b.querySelector(".icon-bell")?.checkVisibility()).map((b) => b.textContent.trim())`)
				if len(bells) != 1 {
					t.Errorf("notification controls with a bell on the phone: %q; want exactly one", bells)
				}
			}
			// j down the list: the focused card is never under the bar.
			p.do(chromedp.Evaluate[chromedp.Void](`document.activeElement?.blur(); window.scrollTo(0, 0)`))
			for range 11 {
				p.do(chromedp.KeyEvent("j"))
			}
			for range 6 {
				p.do(chromedp.KeyEvent("k"))
			}
			p.waitJS(`document.activeElement?.classList.contains("card")`)
			// Let a smooth scroll settle (reduced motion makes it instant).
			p.waitJS(`(() => { const y = scrollY; return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(scrollY === y)))); })()`)
			got := eval[map[string]float64](p, `(() => ({bar: document.getElementById("topbar").getBoundingClientRect().bottom, card: document.activeElement.getBoundingClientRect().top}))()`)
			if got["card"] < got["bar"] {
				t.Errorf("the focused card's top (%v px) is under the sticky top bar (to %v px)", got["card"], got["bar"])
			}
		})
	}
}

// TestTopBarControlsAppearTogether: which of an admin's top-bar controls
// show is known only once their probes answer, and one appearing moves
// the others (the bar is right-aligned). With the Email settings' probe
// held back 300 ms, the Rules button is not shown early and then moved
// under a pointer about to click it: it is first seen where it stays,
// beside the Email button.
func TestTopBarControlsAppearTogether(t *testing.T) {
	turns.Parallel(t)
	srv := newServerWith(t, serverOptions{auth: true, push: true, email: true})
	p := openSignIn(t, srv)

	paused := chromedp.Events(p.ctx, fetch.RequestPaused)
	if _, err := chromedp.Call(p.ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/api/v1/email/config"}}}); err != nil {
		t.Fatalf("intercept the email settings' probe: %v", err)
	}
	go func() {
		for ev, err := range paused {
			if err != nil {
				return
			}
			time.Sleep(300 * time.Millisecond)
			_, _ = chromedp.Call(p.ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
		}
	}()
	// Every frame, where the Rules button is while it can be seen, and
	// whether the Email button could be seen in that frame; and how long
	// after the bar began to settle (the button shown, out of sight) it
	// was first seen.
	p.do(chromedp.Evaluate[chromedp.Void](`window.rulesSeen = []; (function frame() {
		const seen = (id) => document.getElementById(id)?.checkVisibility({visibilityProperty: true});
		if (!document.getElementById("rules-btn").hidden) window.rulesShown ??= performance.now();
		if (seen("rules-btn")) {
			window.rulesSettled ??= performance.now() - window.rulesShown;
			const r = document.getElementById("rules-btn").getBoundingClientRect();
			const at = Math.round(r.left) + "," + Math.round(r.top) + (seen("email-btn") ? " with Email" : " without Email");
			if (window.rulesSeen.at(-1) !== at) window.rulesSeen.push(at);
		}
		requestAnimationFrame(frame);
	})()`))

	p.signIn("carol", carolPassword)
	p.waitSignedIn("carol")
	p.clickTopBar("email-btn")
	p.waitJS(`document.getElementById("email-dialog").open`)
	seen := eval[[]string](p, `window.rulesSeen`)
	if settled := eval[float64](p, `window.rulesSettled`); settled >= 1900 && len(seen) > 1 {
		// The bar waits 2 s at most for its probes, then shows what it has.
		t.Skipf("the probes took %.0f ms on this busy machine, longer than the bar waits: %q", settled, seen)
	}
	if len(seen) != 1 || !strings.HasSuffix(seen[0], " with Email") {
		t.Errorf("the Rules button was seen at %q; want one place, with the Email button beside it", seen)
	}
}

// clickTopBar clicks the top bar's control of id with the mouse once it
// is in sight (waitTopBar).
func (p *page) clickTopBar(id string) {
	p.t.Helper()
	p.waitTopBar(id)
	p.do(chromedp.Click(chromedp.CSS("#" + id)))
}

// waitTopBar waits until the top bar's controls of ids are in sight, which
// is once the bar has settled (app.js, settleTopBar): before that they
// are laid out but cannot be seen, clicked or focused.
func (p *page) waitTopBar(ids ...string) {
	p.t.Helper()
	cond := `!document.getElementById("topbar-end").dataset.settling`
	for _, id := range ids {
		cond += fmt.Sprintf(` && document.getElementById(%s)?.checkVisibility({visibilityProperty: true})`, js(id))
	}
	p.waitJS(cond)
}
