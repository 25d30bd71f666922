package ui_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/turns"
)

// TestTenThousandPending: with 10,000 questions waiting the inbox loads
// its first screen from the paged replay, holds far fewer cards than
// that, counts them all, and loads the next page as the end of the list
// nears the screen. It logs the time to the first screen and the DOM's
// size (the figures BENCHMARKS.md quotes); it asserts neither.
// TestWindowedInbox scrolls through a long list to its end.
func TestTenThousandPending(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 10,000 interactions")
	}
	turns.Parallel(t)
	srv := newServer(t)
	const n = 10000
	start := time.Now()
	askMany(t, srv, n)
	t.Logf("created %d pending interactions in %v", n, time.Since(start).Round(time.Millisecond))

	p := openTabWithin(t, srv, false, 10*time.Minute, emulateMedia("light"))
	loadStart := time.Now()
	p.waitJS(`document.querySelector("#cards article.card")?.checkVisibility() && document.getElementById("inbox-count").textContent === "10000"`)
	firstScreen := time.Since(loadStart)
	nodes := eval[int](p, `document.getElementsByTagName("*").length`)
	cards := eval[int](p, cardCount)
	t.Logf("10,000 pending: first screen in %v; %d cards and %d DOM elements on the page", firstScreen.Round(time.Millisecond), cards, nodes)
	if cards == 0 || cards > 500 {
		t.Errorf("%d cards on the page with 10,000 pending, want a few pages' worth", cards)
	}
	if got := eval[string](p, `document.querySelector("#cards article.card .question").textContent`); got != "Approve change 0?" {
		t.Errorf("top card %q, want the soonest deadline", got)
	}
	// Scrolling to the end brings the next page.
	p.do(chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, document.documentElement.scrollHeight)`))
	p.waitJS(`[...document.querySelectorAll("#cards .question")].some((q) => q.textContent === "Approve change 50?")`)
}

// askMany asks n approvals of seven agents (the second a free-text
// question), due ten seconds apart in the order of i, and returns their
// ids.
func askMany(t *testing.T, srv *hitlServer, n int) []string {
	t.Helper()
	ctx := context.Background()
	// Many callers ask at once, each every askers-th question, so that
	// their writes share commits as agents' do; deadlines ten seconds
	// apart keep the order by deadline the order of i even when one of
	// them stalls.
	const askers = 32
	ids := make([]string, n)
	errs := make(chan error, askers)
	for w := range askers {
		go func() {
			for i := w; i < n; i += askers {
				req := hitl.CreateRequest{Question: fmt.Sprintf("Approve change %d?", i), Type: hitl.TypeApproval,
					Timeout: float64(3600 + 10*i), SourceAgent: fmt.Sprintf("agent-%d", i%7)}
				if i == 1 {
					req.Question, req.Type = "Explain change 1", hitl.TypeFreeText
				}
				in, _, err := srv.Broker.Create(ctx, req)
				if err != nil {
					errs <- fmt.Errorf("create %d: %w", i, err)
					return
				}
				ids[i] = in.ID
			}
			errs <- nil
		}()
	}
	for range askers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

// TestWindowedInbox: scrolled through a long list to the end and back,
// the page holds only the cards near the screen; a draft typed into a
// card that left the page is there when it comes back; j and k reach
// every card.
func TestWindowedInbox(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 600 interactions")
	}
	turns.Parallel(t)
	srv := newServer(t)
	const n = 600 // twelve pages; lists of 120 or fewer are not windowed
	ids := askMany(t, srv, n)
	draftID := ids[1]
	// Smooth scrolling would make every j wait for its animation.
	p := openTabWithin(t, srv, false, 10*time.Minute, emulateMedia("light"))
	p.waitJS(fmt.Sprintf(`document.getElementById("inbox-count").textContent === "%d"`, n))
	const draft = "Because the old path is gone"
	p.do(chromedp.SendKeys(card(draftID)+" textarea", draft),
		chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`))

	// Scrolling to the end brings every page, a screen at a time.
	scrollStart := time.Now()
	most := evalLong[int](p, `(async () => {
		let most = 0;
		const count = () => document.querySelectorAll("#cards article.card").length;
		const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
		while (![...document.querySelectorAll("#cards .question")].some((q) => q.textContent === "Approve change 599?")) {
			window.scrollTo(0, document.documentElement.scrollHeight);
			await frame();
			most = Math.max(most, count());
		}
		return most;
	})()`)
	nodes := eval[int](p, `document.getElementsByTagName("*").length`)
	t.Logf("scrolled to the end of 600 in %v: at most %d cards on the page; %d at the end, %d DOM elements",
		time.Since(scrollStart).Round(time.Millisecond), most, eval[int](p, cardCount), nodes)
	if most > 150 {
		t.Errorf("%d cards on the page while scrolling through 600, want at most a quarter of them", most)
	}
	if eval[bool](p, fmt.Sprintf(`!!document.querySelector(%s)`, js(card(draftID)))) {
		t.Error("the card at the top is still on the page at the end of 600")
	}
	p.do(chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	p.waitJS(fmt.Sprintf(`document.querySelector(%s)?.value === %s`, js(card(draftID)+" textarea"), js(draft)))
	if got := eval[int](p, cardCount); got > 150 {
		t.Errorf("%d cards on the page back at the top, want at most a quarter of them", got)
	}

	// j from the top walks every card, k walks back.
	keys := evalLong[[]int](p, `(async () => {
		const frame = () => new Promise((r) => requestAnimationFrame(r));
		const walk = async (key) => {
			// The card it starts on counts too (none for the first walk).
			const seen = new Set([document.activeElement?.closest?.("article.card")?.dataset.id].filter(Boolean));
			for (let i = 0; i < 600; i++) {
				(document.activeElement || document.body).dispatchEvent(new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true }));
				const id = document.activeElement?.closest?.("article.card")?.dataset.id;
				if (id) seen.add(id);
				if (i % 100 === 0) await frame();
			}
			return seen.size;
		};
		document.activeElement?.blur();
		const down = await walk("j");
		const last = document.activeElement?.closest("article.card")?.querySelector(".question").textContent;
		const up = await walk("k");
		const first = document.activeElement?.closest("article.card")?.querySelector(".question").textContent;
		return [down, last === "Approve change 599?" ? 1 : 0, up, first === "Approve change 0?" ? 1 : 0,
			document.querySelectorAll("#cards article.card").length];
	})()`)
	t.Logf("j reached %d cards, k %d; %d cards on the page after", keys[0], keys[2], keys[4])
	if keys[0] != n || keys[1] != 1 {
		t.Errorf("j reached %d cards (ending on the last: %v), want all %d", keys[0], keys[1] == 1, n)
	}
	if keys[2] != n || keys[3] != 1 {
		t.Errorf("k reached %d cards (ending on the first: %v), want all %d", keys[2], keys[3] == 1, n)
	}
	if keys[4] > 150 {
		t.Errorf("%d cards on the page after j and k, want at most a quarter of them", keys[4])
	}
}

// cardCount counts the cards on the page.
const cardCount = `document.querySelectorAll("#cards article.card").length`

// evalLong is eval for a script that may take minutes (it walks a long
// list, 200 pages fetched one after the other on a loaded machine).
func evalLong[T any](p *page, expr string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 15*time.Minute)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("evaluate: %v", err)
	}
	return v
}

// restartable is a hitl server over one SQLite file that can be stopped
// and started again on the same address, as an operator restarts it.
type restartable struct {
	*hitlServer
	t     *testing.T
	last  *hitltest.Server // the server last started
	mu    sync.Mutex
	socks []net.Conn
}

func newRestartable(t *testing.T) *restartable {
	t.Helper()
	r := &restartable{t: t, hitlServer: &hitlServer{faults: &faults{}}}
	r.start()
	t.Cleanup(r.stop)
	return r
}

// start serves the database on the address (a new one the first time).
func (r *restartable) start() {
	r.t.Helper()
	if r.last == nil {
		// Long-polls are not parked: the connections taken from the
		// HTTP server are the WebSockets, which stop cuts.
		r.last = hitltest.Start(r.t, &hitltest.Options{NoParking: true, ConnState: r.track})
	} else {
		r.last = r.last.Restart(r.t)
	}
	r.Server, r.Broker = r.last.Server, r.last.Broker
}

// track keeps the hijacked connections, the WebSockets.
func (r *restartable) track(c net.Conn, state http.ConnState) {
	if state == http.StateHijacked {
		r.mu.Lock()
		r.socks = append(r.socks, c)
		r.mu.Unlock()
	}
}

// stop cuts the WebSockets, then shuts the server down.
func (r *restartable) stop() {
	if r.Server == nil {
		return
	}
	r.mu.Lock()
	for _, c := range r.socks {
		c.Close()
	}
	r.socks = nil
	r.mu.Unlock()
	r.last.Stop()
	r.Server = nil
}

// TestDownBannerAndResend: while the server is down the page says so
// plainly and marks its countdowns as possibly stale; an answer given
// meanwhile is kept and sent once the server is back, and the error
// goes away.
func TestDownBannerAndResend(t *testing.T) {
	turns.Parallel(t)
	r := newRestartable(t)
	id := r.ask(t, map[string]any{"interaction_type": "approval", "question": "Fail over to the replica?", "timeout": 900})
	p := openPage(t, r.hitlServer)
	p.waitCard(id)
	p.waitJS(`document.getElementById("down-banner").hidden`)
	r.stop()
	p.waitJS(`!document.getElementById("down-banner").hidden && document.body.classList.contains("is-offline")`)
	if got := eval[string](p, `document.getElementById("down-banner").textContent`); got == "" {
		t.Error("the down banner is empty")
	}
	if got := eval[string](p, fmt.Sprintf(`getComputedStyle(document.querySelector(%s), "::after").content`, js(card(id)+" .countdown-text"))); got != `" (may be out of date)"` {
		t.Errorf("the countdown's stale mark is %s", got)
	}
	p.do(chromedp.Click(chromedp.CSS(card(id) + " .btn-approve")))
	p.waitCardText(id, "It is sent again when the connection is back.")

	r.start()
	p.waitCardText(id, "Answer sent.")
	p.waitJS(`document.getElementById("down-banner").hidden && !document.body.classList.contains("is-offline")`)
	if got := r.status(t, id); got != hitl.StatusAnswered {
		t.Errorf("status after the restart %q, want answered", got)
	}
	if eval[bool](p, fmt.Sprintf(`!!document.querySelector(%s)?.checkVisibility()`, js(card(id)+" .card-error"))) {
		t.Error("the card still shows its error")
	}
}
