package email_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl"
)

const chromiumPath = "/usr/bin/chromium"

// newBrowser starts a headless Chromium for one test.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("browser test skipped: %s is missing (run ./test.sh, which installs the chromium package)", chromiumPath)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromiumPath), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(760, 720), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true), chromedp.Flag("lang", "en-US"))
	ctx, cancel := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() {
		cancelTimeout()
		cancel()
		cancelAlloc()
	})
	return ctx
}

// screenshot writes docs/name with HITL_UPDATE_SCREENSHOTS=1.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if os.Getenv("HITL_UPDATE_SCREENSHOTS") == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("..", "docs", name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBrowserConfirms renders the mail's HTML part in Chromium, follows
// its Approve link, and clicks Confirm on the page it opens.
func TestBrowserConfirms(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	req := approval("Deploy build 1432 to production?", &hitl.Targets{Users: []string{"alice"}})
	req.Context = "Build **1432** passed all 2,318 tests.\n\n- 14 commits since the last deploy\n- migration `0042_orders` runs first"
	in := h.ask(req)
	m := parse(t, h.box.wait(1)[0])
	ctx := newBrowser(t)

	// The mail, as a client shows its HTML part.
	run(t, ctx, chromedp.Navigate(httptestHTML(t, m.html)))
	if label := text(t, ctx, `a[href*="/email/answer"]`); strings.TrimSpace(label) != "Approve" {
		t.Errorf("first link in the mail: %q, want Approve", label)
	}
	screenshot(t, ctx, "email.png")

	// Follow the link: a confirmation page, nothing recorded yet.
	run(t, ctx, chromedp.Click(`a[href*="/email/answer"]`, chromedp.NodeVisible))
	run(t, ctx, chromedp.WaitVisible(`form button`))
	heading, who := text(t, ctx, "h1"), text(t, ctx, ".who")
	if !strings.Contains(heading, "Approve") || !strings.Contains(heading, "Deploy build 1432") || !strings.Contains(who, "alice") {
		t.Errorf("confirmation page: %q / %q", heading, who)
	}
	if got := h.get(in.ID); got.Status != hitl.StatusPending {
		t.Fatalf("after opening the link: %s, want pending", got.Status)
	}
	screenshot(t, ctx, "email-confirm.png")

	run(t, ctx, chromedp.Click(`form button`, chromedp.NodeVisible))
	run(t, ctx, chromedp.WaitVisible(`main.ok`))
	if done := text(t, ctx, "h1"); !strings.Contains(done, "Recorded") {
		t.Errorf("after Confirm: %q", done)
	}
	if got := h.get(in.ID); got.Status != hitl.StatusAnswered || got.Result.RespondedBy != "alice" || got.Result.Channel != hitl.ChannelEmail {
		t.Errorf("after Confirm: %s %+v; want answered by alice via email", got.Status, got.Result)
	}
}

func run(t *testing.T, ctx context.Context, a chromedp.Action[chromedp.Void]) {
	t.Helper()
	if _, err := chromedp.Run(ctx, a); err != nil {
		t.Fatal(err)
	}
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(sel))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// httptestHTML serves html at a URL of its own.
func httptestHTML(t *testing.T, html string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(html))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
