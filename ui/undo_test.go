package ui_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl/internal/turns"
)

// TestUndo: with an undo window, a decision waits before it is sent: the
// toast says so, u takes it back (nothing reaches the agent, the card can
// be answered again), an answer left alone is sent when the window
// closes, and one still held when the page goes away is sent then.
func TestUndo(t *testing.T) {
	turns.Parallel(t)
	const window = 2 * time.Second
	srv := newServerWith(t, serverOptions{undo: window})
	first := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Deploy build 1432 to production?", "timeout": 600})
	second := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Rotate the signing key?", "timeout": 900})
	waitFirst, waitSecond := srv.wait(t, first), srv.wait(t, second)
	p := openPage(t, srv)
	p.waitOrder(first, second)
	p.waitFocusedCard(first)

	p.do(press("a"))
	p.waitJS(`!document.querySelector(".undo-toast").hidden && document.querySelector(".undo-toast").textContent.includes("Deploy build 1432")`)
	if got := eval[string](p, `document.querySelector(".undo-button").textContent`); got != "Undo" {
		t.Errorf("the toast's button reads %q", got)
	}
	p.waitFocusedCard(second) // the focus moved on at once
	p.do(press("u"))
	p.waitFocusedCard(first)
	p.waitJS(fmt.Sprintf(`!document.querySelector(%s).disabled && document.querySelector(".undo-toast").hidden`, js(card(first)+" fieldset.answer-fields")))
	time.Sleep(window + 500*time.Millisecond) // past the window: nothing may arrive
	srv.stillPending(t, first)

	// Left alone, it is sent when the window closes.
	p.do(press("a"))
	start := time.Now()
	srv.stillPending(t, first)
	got := awaitResult(t, waitFirst)
	if got.Status != "answered" || string(got.Result.Value) != "true" {
		t.Fatalf("after the window: %+v", got)
	}
	if d := time.Since(start); d < window-300*time.Millisecond {
		t.Errorf("sent after %v, before the window closed", d)
	}

	// Held when the page goes: sent at once.
	p.waitFocusedCard(second)
	p.do(press("a"))
	p.waitJS(`!document.querySelector(".undo-toast").hidden`)
	p.do(chromedp.Navigate("about:blank"))
	select {
	case got := <-waitSecond:
		if got.Status != "answered" {
			t.Errorf("after leaving the page: %s", got.Status)
		}
	case <-time.After(window / 2):
		t.Fatal("a decision held as the page went was not sent at once")
	}
}
