package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl/internal/turns"
)

// chromiumPath is Debian's Chromium, which test.sh installs.
const chromiumPath = "/usr/bin/chromium"

// One browser for the whole test binary; each test opens its own tab.
var browser struct {
	once   sync.Once
	ctx    context.Context
	cancel func()
	err    error
	dir    string
}

func TestMain(m *testing.M) {
	turns.Use(1)
	code := m.Run()
	if browser.cancel != nil {
		browser.cancel()
	}
	if browser.dir != "" {
		os.RemoveAll(browser.dir)
	}
	os.Exit(code)
}

// requireChromium skips the test when Chromium is missing, except in CI
// (CI is set), where a missing browser is a failure.
func requireChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing (CI is set, so this fails): test.sh installs the chromium package", chromiumPath)
		}
		t.Skipf("browser test skipped: %s is missing (run ./test.sh, which installs the chromium package)", chromiumPath)
	}
}

// startBrowser starts the shared headless Chromium once.
func startBrowser() (context.Context, error) {
	browser.once.Do(func() {
		dir, err := os.MkdirTemp("", "hitl-ui-chromium-")
		if err != nil {
			browser.err = err
			return
		}
		browser.dir = dir
		allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
			chromedp.ExecPath(chromiumPath),
			chromedp.Headless,
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.NoFirstRun,
			chromedp.NoDefaultBrowserCheck,
			chromedp.UserDataDir(dir),
			chromedp.WindowSize(1100, 900),
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.Flag("disable-quic", true),
			chromedp.Flag("disable-extensions", true),
			chromedp.Flag("disable-dev-shm-usage", true),
			chromedp.Flag("disable-background-timer-throttling", true),
			chromedp.Flag("disable-backgrounding-occluded-windows", true),
			chromedp.Flag("disable-renderer-backgrounding", true),
			chromedp.Flag("disable-features", "Translate,MediaRouter,OptimizationHints"),
			chromedp.Flag("metrics-recording-only", true),
			chromedp.Flag("password-store", "basic"),
			chromedp.Flag("hide-scrollbars", true),
			chromedp.Flag("mute-audio", true),
			chromedp.Flag("lang", "en-US"),
		)
		ctx, cancelBrowser := chromedp.NewContext(allocCtx)
		browser.ctx = ctx
		browser.cancel = func() { cancelBrowser(); cancelAlloc() }
		browser.err = chromedp.Do(ctx) // starts the browser
	})
	return browser.ctx, browser.err
}

// page is one browser tab on a server.
type page struct {
	t   *testing.T
	ctx context.Context
	srv *hitlServer

	mu       sync.Mutex
	problems []string // CSP violations and uncaught exceptions
	// tolerated, when set, says which console errors are not problems
	// (a test tool's own, on a page whose CSP is not hitl's).
	tolerated func(string) bool
}

// openPage opens a new tab, optionally runs setup steps before loading
// the inbox, loads it and waits until it is live.
func openPage(t *testing.T, srv *hitlServer, setup ...chromedp.Action[chromedp.Void]) *page {
	t.Helper()
	p := openTab(t, srv, false, setup...)
	p.waitJS(`document.getElementById("conn").dataset.state === "live"`)
	return p
}

// openSignIn opens the page in a browser context of its own (its own
// cookies: one person signed in per context) and waits for the sign-in
// view.
func openSignIn(t *testing.T, srv *hitlServer, setup ...chromedp.Action[chromedp.Void]) *page {
	t.Helper()
	p := openTab(t, srv, true, setup...)
	p.waitJS(`!document.getElementById("view-login").hidden && document.getElementById("login-form").checkVisibility()`)
	return p
}

// openTab opens a new tab, in a new browser context when isolated, runs
// setup steps and loads the inbox.
func openTab(t *testing.T, srv *hitlServer, isolated bool, setup ...chromedp.Action[chromedp.Void]) *page {
	t.Helper()
	return openTabWithin(t, srv, isolated, 60*time.Second, setup...)
}

// openTabWithin is openTab for a tab that may stay open for timeout.
func openTabWithin(t *testing.T, srv *hitlServer, isolated bool, timeout time.Duration, setup ...chromedp.Action[chromedp.Void]) *page {
	t.Helper()
	return openTabAt(t, srv, srv.URL+"/", isolated, timeout, setup...)
}

// openTabAt is openTabWithin for the page at url (another site's page
// that embeds the prompt, say).
func openTabAt(t *testing.T, srv *hitlServer, url string, isolated bool, timeout time.Duration, setup ...chromedp.Action[chromedp.Void]) *page {
	t.Helper()
	requireChromium(t)
	bctx, err := startBrowser()
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	var opts []chromedp.ContextOption
	if isolated {
		opts = append(opts, chromedp.WithNewBrowserContext())
	} else {
		id, err := testBrowserContext(t, bctx)
		if err != nil {
			t.Fatalf("browser context: %v", err)
		}
		opts = append(opts, chromedp.WithExistingBrowserContext(id))
	}
	tabCtx, cancelTab := chromedp.NewContext(bctx, opts...)
	if err := chromedp.Do(tabCtx); err != nil {
		cancelTab()
		t.Fatalf("open tab: %v", err)
	}
	ctx, cancelTimeout := context.WithTimeout(tabCtx, timeout)
	p := &page{t: t, ctx: ctx, srv: srv}
	messages := chromedp.Console(tabCtx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			text := m.String()
			if m.IsException() || strings.Contains(text, "Content Security Policy") || strings.Contains(text, "Refused to") {
				p.mu.Lock()
				if p.tolerated == nil || !p.tolerated(text) {
					p.problems = append(p.problems, text)
				}
				p.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		<-done
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, m := range p.problems {
			t.Errorf("browser console: %s", m)
		}
	})
	p.do(setup...)
	p.do(chromedp.Navigate(url))
	return p
}

// testContexts holds each test's browser context (testBrowserContext),
// by test.
var testContexts sync.Map // *testing.T → *testContext

type testContext struct {
	once sync.Once
	id   cdp.BrowserContextID
	err  error
}

// testBrowserContext returns the browser context the test's tabs share
// (those not isolated), made on its first tab and disposed of when the
// test ends: their cookies, storage and permissions are the test's own.
// The browser keeps storage by origin, and the port a finished test's
// server let go may be the next server's: in one context for all, a view
// one test chose (the compact list, say) would open another test's inbox.
func testBrowserContext(t *testing.T, bctx context.Context) (cdp.BrowserContextID, error) {
	v, _ := testContexts.LoadOrStore(t, &testContext{})
	c := v.(*testContext)
	c.once.Do(func() {
		res, err := chromedp.CallBrowser(bctx, target.CreateBrowserContext, target.CreateBrowserContextParams{})
		if err != nil {
			c.err = err
			return
		}
		c.id = res.BrowserContextID
		t.Cleanup(func() {
			testContexts.Delete(t)
			if _, err := chromedp.CallBrowser(bctx, target.DisposeBrowserContext, target.DisposeBrowserContextParams{BrowserContextID: c.id}); err != nil {
				t.Logf("dispose of the browser context: %v", err)
			}
		})
	})
	return c.id, c.err
}

// do runs browser steps, failing the test on error.
func (p *page) do(steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if len(steps) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		p.t.Fatalf("browser: %v", err)
	}
}

// waitJS waits until the JavaScript expression is truthy.
func (p *page) waitJS(expr string) {
	p.t.Helper()
	p.waitJSFor(expr, 20*time.Second)
}

// waitJSFor is waitJS for what may take longer than the usual 20 s on a
// busy machine.
func (p *page) waitJSFor(expr string, timeout time.Duration) {
	p.t.Helper()
	_, err := chromedp.Run(p.ctx, chromedp.Poll[chromedp.Void](expr,
		chromedp.WithPollingInterval(40*time.Millisecond), chromedp.WithPollingTimeout(timeout)))
	if err != nil {
		p.t.Fatalf("waiting for %s: %v (the focus is on %s)", expr, err, p.focusName())
	}
}

// focusName names the element holding the focus: its id, or else its
// classes or tag; "unknown" when the page cannot say.
func (p *page) focusName() string {
	name, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.activeElement?.id || document.activeElement?.className || document.activeElement?.tagName || ""`))
	if err != nil {
		return "unknown"
	}
	return name
}

// waitStill waits until what sel matches has stayed in one place for
// three animation frames. Moving the focus to a card scrolls it into view
// smoothly (without reduced motion), and chromedp clicks at the
// coordinates it reads: a click read mid-scroll lands beside its target.
func (p *page) waitStill(sel string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf(`new Promise((ok) => {
		const el = document.querySelector(%s);
		if (!el) return ok(false);
		const at = () => { const b = el.getBoundingClientRect(); return b.x + "," + b.y; };
		const first = at();
		let frames = 0;
		const frame = () => {
			if (at() !== first) return ok(false);
			if (++frames === 3) return ok(true);
			requestAnimationFrame(frame);
		};
		requestAnimationFrame(frame);
	})`, js(sel)))
}

// eval evaluates a JavaScript expression and decodes its value.
func eval[T any](p *page, expr string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// card is the CSS selector of the card of interaction id.
func card(id string) string {
	return fmt.Sprintf(`article.card[data-id=%q]`, id)
}

// js quotes s as a JavaScript string literal.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// waitCardText waits until the card of id contains text.
func (p *page) waitCardText(id, text string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf(`(document.querySelector(%s)?.textContent || "").includes(%s)`, js(card(id)), js(text)))
}

// waitCardGone waits until the card of id has left the page.
func (p *page) waitCardGone(id string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf(`!document.querySelector(%s)`, js(card(id))))
}

// waitCard waits until the card of id is on the page.
func (p *page) waitCard(id string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf(`document.querySelector(%s)?.checkVisibility()`, js(card(id))))
}

// ctrlEnter presses Ctrl+Enter in the focused element.
func ctrlEnter() chromedp.Action[chromedp.Void] {
	return chromedp.KeyEvent("\r", chromedp.KeyModifiers(chromedp.ModifierCtrl))
}

// TestTabsKeepToTheirTest: a test's tabs share its choices (two tabs of
// one person), and the next test's tab on the same origin (a port let go
// and handed out again) starts afresh. In one browser context for all,
// the second subtest's inbox opened compact.
func TestTabsKeepToTheirTest(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	id := srv.askAction(t, "Bash", map[string]any{"command": "make release"}, nil)
	compact := `document.getElementById("cards").classList.contains("is-compact")`
	t.Run("chooses", func(t *testing.T) {
		p := openPage(t, srv)
		p.waitCard(id)
		p.do(chromedp.Click(chromedp.CSS("#triage-compact")))
		p.waitJS(compact)
		second := openPage(t, srv)
		second.waitCard(id)
		if !eval[bool](second, compact) {
			t.Error("the test's second tab did not open compact, as the person chose in the first")
		}
	})
	t.Run("next", func(t *testing.T) {
		p := openPage(t, srv)
		p.waitCard(id)
		if eval[bool](p, compact) {
			t.Error("another test's tab on the same origin opened compact: the tests share the browser's storage")
		}
	})
}
