package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl/internal/turns"
)

// axePath is axe-core as test.sh installs it from the npm registry.
const axePath = "testdata/node_modules/axe-core/axe.min.js"

// askOneOfEach asks one question of each type, as in the screenshots, and
// returns their ids in the order asked. Their deadlines are hours away:
// a test using them may wait minutes for its turn at the browser
// (internal/turns), and none of them is about expiry.
func askOneOfEach(t *testing.T, srv *hitlServer) []string {
	t.Helper()
	return []string{
		srv.ask(t, map[string]any{
			"interaction_type": "free_text",
			"question":         "What should the release announcement say?",
			"context":          "Keep it under 280 characters; it goes to the status page and to _@hitl_ on social.",
			"default_response": "Bug fixes and performance improvements.",
			"timeout":          3 * 3600,
			"source_agent":     "release-writer",
		}),
		srv.ask(t, map[string]any{
			"interaction_type": "form",
			"question":         "Fill in the vendor details for purchase order PO-2291",
			"form_schema": json.RawMessage(`{
				"type": "object",
				"required": ["company", "email", "amount"],
				"properties": {
					"company":  {"type": "string", "title": "Company", "minLength": 2},
					"email":    {"type": "string", "format": "email", "title": "Billing email"},
					"amount":   {"type": "number", "title": "Amount", "minimum": 0, "description": "Total in the chosen currency, VAT included."},
					"currency": {"type": "string", "title": "Currency", "enum": ["EUR", "USD", "GBP"], "default": "EUR"},
					"delivery": {"type": "string", "format": "date", "title": "Delivery date"},
					"urgent":   {"type": "boolean", "title": "Urgent", "description": "Skips the second approval."}
				}
			}`),
			"timeout":      2 * 3600,
			"source_agent": "procurement",
		}),
		srv.ask(t, map[string]any{
			"interaction_type": "multi_choice",
			"question":         "Which customers should get the apology email?",
			"options": []map[string]any{
				{"key": "acme", "label": "Acme Corp"}, {"key": "globex", "label": "Globex"},
				{"key": "initech", "label": "Initech"}, {"key": "umbrella", "label": "Umbrella"},
			},
			"default_response": []string{"acme"},
			"timeout":          45 * 60,
			"source_agent":     "support-bot",
		}),
		srv.ask(t, map[string]any{
			"interaction_type": "single_choice",
			"question":         "Which region should the new database live in?",
			"options": []map[string]any{
				{"key": "eu-west-1", "label": "Ireland"}, {"key": "us-east-1", "label": "N. Virginia"},
				{"key": "ap-southeast-2", "label": "Sydney"},
			},
			"timeout":      20 * 60,
			"source_agent": "infra-planner",
		}),
		srv.ask(t, map[string]any{
			"interaction_type": "approval",
			"question":         "Deploy build 1432 to production?",
			"context":          "All **212 checks** passed on `main`. Changes since the last release:\n\n- 3 database migrations (backwards compatible)\n- new billing webhook\n\nRelease notes: [build 1432](https://example.com/builds/1432)",
			"options":          []map[string]any{{"key": "deploy", "label": "Deploy"}, {"key": "hold", "label": "Hold"}},
			"timeout":          4 * 3600,
			"source_agent":     "deployer",
		}),
	}
}

// emulateMedia sets prefers-color-scheme and turns animations off, so
// contrast checks and screenshots see the settled page.
func emulateMedia(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{
				{Name: "prefers-color-scheme", Value: scheme},
				{Name: "prefers-reduced-motion", Value: "reduce"},
			},
		})
		return err
	})
}

// axeViolation is what the test reports of an axe-core violation.
type axeViolation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// axeSource reads axe-core's script once for the whole test binary.
var axeSource = sync.OnceValues(func() ([]byte, error) { return os.ReadFile(axePath) })

// runAxe injects axe-core into the page, unless the page's document has
// it already, and returns its violations.
func runAxe(t *testing.T, p *page) []axeViolation {
	t.Helper()
	src, err := axeSource()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("axe-core is missing (%v); test.sh installs it from npm", err)
		}
		t.Skipf("accessibility test skipped: %v (run ./test.sh, which installs axe-core from npm)", err)
	}
	// Compiling its half a megabyte costs the browser far more than a run
	// of its checks: once per document is enough.
	if !eval[bool](p, `typeof axe === "object"`) {
		if _, err := chromedp.Run(p.ctx, chromedp.Evaluate[chromedp.Void](string(src))); err != nil {
			t.Fatalf("inject axe-core: %v", err)
		}
	}
	// A card fades in (0.28 s): checked before its animation ends, its
	// text is still partly transparent and fails the contrast check.
	// Finite animations end first; an endless one (the reconnecting dot's
	// pulse) is not waited for.
	return eval[[]axeViolation](p, `Promise.all(document.getAnimations()
		.filter(a => isFinite(a.effect?.getComputedTiming().endTime))
		.map(a => a.finished.catch(() => {})))
	.then(() => axe.run(document, {resultTypes: ["violations"]})).then(r => r.violations.map(v => ({
		id: v.id, impact: v.impact || "", help: v.help,
		nodes: v.nodes.slice(0, 5).map(n => n.target.join(" ") + (n.failureSummary ? " — " + n.failureSummary.replace(/\s+/g, " ") : "")),
	})))`)
}

// TestAccessibility runs axe-core on an inbox with one card of each type,
// in light and dark; with HITL_UPDATE_SCREENSHOTS=1 it also writes the
// screenshots in docs/.
func TestAccessibility(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	ids := askOneOfEach(t, srv)
	for _, scheme := range []string{"light", "dark"} {
		t.Run(scheme, func(t *testing.T) {
			p := openPage(t, srv, chromedp.EmulateViewport(960, 900), emulateMedia(scheme))
			for _, id := range ids {
				p.waitCard(id)
			}
			p.waitJS(`document.title === "(5) hitl"`)
			// The newest card takes the focus; the screenshot shows the page
			// at rest, without the focus ring.
			p.waitJS(`document.activeElement === document.querySelector(".card")`)
			p.do(chromedp.Evaluate[chromedp.Void](`document.activeElement.blur(); window.scrollTo(0, 0)`))
			p.waitTopBar("slack-btn") // local mode: an admin
			checkAxe(t, p)
			if os.Getenv("HITL_UPDATE_SCREENSHOTS") != "" {
				png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
				if err != nil {
					t.Fatalf("screenshot: %v", err)
				}
				writeDoc(t, fmt.Sprintf("inbox-%s.png", scheme), png)
			}
		})
	}
}

// TestNarrowScreen checks the inbox fits a 375 px wide phone screen.
func TestNarrowScreen(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	ids := askOneOfEach(t, srv)
	p := openPage(t, srv, chromedp.EmulateViewport(375, 812, chromedp.EmulateMobile), emulateMedia("light"))
	for _, id := range ids {
		p.waitCard(id)
	}
	p.waitTopBar("slack-btn")
	checkNarrow(t, p)
	if os.Getenv("HITL_UPDATE_SCREENSHOTS") != "" {
		png, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		writeDoc(t, "inbox-phone.png", png)
	}
}

// checkAxe fails the test on axe-core's serious and critical violations
// in the page, and logs the others.
func checkAxe(t *testing.T, p *page) {
	t.Helper()
	for _, v := range runAxe(t, p) {
		if v.Impact == "serious" || v.Impact == "critical" {
			t.Errorf("axe %s (%s): %s\n\t%s", v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n\t"))
		} else {
			t.Logf("axe %s (%s): %s", v.ID, v.Impact, v.Help)
		}
	}
}

// checkNarrow fails the test when the page scrolls sideways at a 375 px
// viewport, or an element sticks out past its right edge.
func checkNarrow(t *testing.T, p *page) {
	t.Helper()
	got := eval[int](p, `document.documentElement.scrollWidth`)
	if got > 375 {
		t.Errorf("page is %d px wide at a 375 px viewport; want no horizontal scrolling", got)
	}
	wide := eval[[]string](p, `[...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > 376 && e.getClientRects().length).map(e => e.tagName + "#" + e.id + "." + e.className).slice(0, 5)`)
	if len(wide) > 0 {
		t.Errorf("elements past the right edge at 375 px: %v", wide)
	}
}

func writeDoc(t *testing.T, name string, data []byte) {
	t.Helper()
	path := filepath.Join("..", "docs", name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", path)
}

// TestAxeWaitsForTheCardsToFadeIn: a card fades in, and axe-core run
// while it is still partly transparent finds its text too faint. With
// the card's entry slowed to two seconds and restarted, checkAxe finds
// nothing serious: it waits for the animation to end (it failed on the
// contrast of the fading card before it did).
func TestAxeWaitsForTheCardsToFadeIn(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	id := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Deploy build 42 to production?", "source_agent": "deploy-bot"})
	// Motion as a person has it: emulateMedia asks for reduced motion,
	// which turns the animations off (the pages of the sign-in tests
	// keep them, and their axe-core checks failed on a fading card).
	p := openPage(t, srv, chromedp.EmulateViewport(960, 900))
	p.waitCard(id)
	p.do(chromedp.Evaluate[chromedp.Void](`(() => {
		for (const w of document.querySelectorAll(".card-wrap")) {
			w.style.animation = "none";
			w.offsetWidth;
			w.style.animation = "card-in 2s linear";
		}
		document.activeElement.blur();
	})()`))
	if !eval[bool](p, `document.getAnimations().some(a => a.animationName === "card-in" && a.playState === "running")`) {
		t.Fatal("the card's entry is not running; the test would prove nothing")
	}
	checkAxe(t, p)
}
