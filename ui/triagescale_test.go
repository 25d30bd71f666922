package ui_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/server"
	"github.com/hitl-sh/hitl/sqlite"
)

// TestTenThousandPending: with 10,000 questions waiting the inbox loads
// its first screen from the paged replay, holds far fewer cards than
// that, counts them all, and loads the next page as the end of the list
// nears the screen. It logs the time to the first screen and the DOM's
// size (the figures BENCHMARKS.md quotes); it asserts neither.
func TestTenThousandPending(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 10,000 interactions")
	}
	t.Parallel()
	srv := newServer(t)
	ctx := context.Background()
	const n = 10000
	start := time.Now()
	for i := range n {
		req := hitl.CreateRequest{Question: fmt.Sprintf("Approve change %d?", i), Type: hitl.TypeApproval,
			Timeout: float64(3600 + i), SourceAgent: fmt.Sprintf("agent-%d", i%7)}
		if _, _, err := srv.Broker.Create(ctx, req); err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
	}
	t.Logf("created %d pending interactions in %v", n, time.Since(start).Round(time.Millisecond))

	p := openTab(t, srv, false)
	loadStart := time.Now()
	p.waitJS(`document.querySelector("#cards article.card")?.checkVisibility() && document.getElementById("inbox-count").textContent === "10000"`)
	firstScreen := time.Since(loadStart)
	nodes := eval[int](p, `document.getElementsByTagName("*").length`)
	cards := eval[int](p, `document.querySelectorAll("#cards article.card").length`)
	t.Logf("10,000 pending: first screen in %v; %d cards and %d DOM elements on the page", firstScreen.Round(time.Millisecond), cards, nodes)
	if cards == 0 || cards > 500 {
		t.Errorf("%d cards on the page with 10,000 pending, want a few pages' worth", cards)
	}
	if got := eval[string](p, `document.querySelector("#cards article.card .question").textContent`); got != "Approve change 0?" {
		t.Errorf("top card %q, want the soonest deadline", got)
	}
	// Scrolling to the end brings the next page.
	p.do(chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, document.body.scrollHeight)`))
	p.waitJS(fmt.Sprintf(`document.querySelectorAll("#cards article.card").length > %d`, cards))
	more := eval[int](p, `document.querySelectorAll("#cards article.card").length`)
	if more > 500 {
		t.Errorf("%d cards after one scroll, want pages loaded on demand", more)
	}
}

// restartable is a hitl server over one SQLite file that can be stopped
// and started again on the same address, as an operator restarts it.
type restartable struct {
	*hitlServer
	t      *testing.T
	db     string
	addr   string
	mu     sync.Mutex
	socks  []net.Conn
	broker *broker.Broker
	store  *sqlite.Store
}

func newRestartable(t *testing.T) *restartable {
	t.Helper()
	r := &restartable{t: t, db: filepath.Join(t.TempDir(), "hitl.db"), hitlServer: &hitlServer{faults: &faults{}}}
	r.start()
	t.Cleanup(r.stop)
	return r
}

// start serves the database on the address (a new one the first time).
func (r *restartable) start() {
	r.t.Helper()
	store, err := sqlite.Open(r.db, nil)
	if err != nil {
		r.t.Fatalf("open store: %v", err)
	}
	b := broker.New(store, nil)
	if err := b.Start(context.Background()); err != nil {
		r.t.Fatalf("start broker: %v", err)
	}
	ts := httptest.NewUnstartedServer(server.New(b, nil).Handler())
	if r.addr != "" {
		ts.Listener.Close()
		var l net.Listener
		for range 50 {
			if l, err = net.Listen("tcp", r.addr); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			r.t.Fatalf("listen again on %s: %v", r.addr, err)
		}
		ts.Listener = l
	}
	ts.Config.ConnState = func(c net.Conn, state http.ConnState) {
		if state == http.StateHijacked {
			r.mu.Lock()
			r.socks = append(r.socks, c)
			r.mu.Unlock()
		}
	}
	ts.Start()
	r.addr = ts.Listener.Addr().String()
	r.Server, r.Broker, r.broker, r.store = ts, b, b, store
}

// stop shuts the server down, its WebSockets too.
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
	r.Server.Close()
	r.broker.Close()
	r.store.Close()
	r.Server = nil
}

// TestDownBannerAndResend: while the server is down the page says so
// plainly and marks its countdowns as possibly stale; an answer given
// meanwhile is kept and sent once the server is back, and the error
// goes away.
func TestDownBannerAndResend(t *testing.T) {
	t.Parallel()
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
