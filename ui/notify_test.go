package ui_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl/internal/turns"
)

// fakeNotifications replaces the browser's Notification with a recorder,
// so the test sees what the page asks for and can click a notification.
func fakeNotifications() chromedp.Action[chromedp.Void] {
	const src = `(() => {
		window.__notes = [];
		class FakeNotification extends EventTarget {
			static get permission() { return sessionStorage.getItem("fake-permission") || "default"; }
			static async requestPermission() { sessionStorage.setItem("fake-permission", "granted"); return "granted"; }
			constructor(title, opts) { super(); this.title = title; Object.assign(this, opts); this.closed = false; window.__notes.push(this); }
			close() { this.closed = true; }
		}
		window.Notification = FakeNotification;
	})();`
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Call(ctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: src})
		return err
	})
}

func TestNotifications(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	p := openPage(t, srv, fakeNotifications())
	p.clickTopBar("notify-btn")
	p.waitJS(`document.getElementById("notify-state").textContent === "Notifications on"`)

	id := srv.ask(t, map[string]any{"question": "Enter the 2FA code sent to your phone"})
	p.waitCard(id)
	p.waitJS(`window.__notes.length === 1`)
	type note struct {
		Title              string `json:"title"`
		Body               string `json:"body"`
		Tag                string `json:"tag"`
		RequireInteraction bool   `json:"requireInteraction"`
	}
	got := eval[note](p, `({title: __notes[0].title, body: __notes[0].body, tag: __notes[0].tag, requireInteraction: __notes[0].requireInteraction})`)
	want := note{Title: "Human Feedback Required", Body: "Enter the 2FA code sent to your phone", Tag: id, RequireInteraction: true}
	if got != want {
		t.Errorf("notification = %+v, want %+v", got, want)
	}

	// Clicking it brings the person to the card.
	p.do(chromedp.Click(chromedp.CSS("#tab-history")))
	p.waitJS(`!document.getElementById("view-history").hidden`)
	p.do(chromedp.Evaluate[chromedp.Void](`__notes[0].dispatchEvent(new Event("click"))`))
	p.waitJS(fmt.Sprintf(`document.activeElement?.dataset?.id === %s && !document.getElementById("view-inbox").hidden`, js(id)))

	// One notification per question: a reload does not repeat it, and it
	// is closed when the question ends.
	p.do(chromedp.Reload())
	p.waitCard(id)
	second := srv.ask(t, map[string]any{"question": "Second question"})
	p.waitCard(second)
	p.waitJS(`window.__notes.length === 1 && __notes[0].body === "Second question"`)
	srv.call(t, "POST", "/api/v1/interactions/"+second+"/cancel", nil)
	p.waitJS(`__notes[0].closed === true`)
}

func TestNewCardDoesNotStealFocus(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	first := srv.ask(t, map[string]any{"question": "First: describe the bug"})
	p := openPage(t, srv)
	p.waitCard(first)
	area := card(first) + " textarea"
	p.do(chromedp.SendKeys(chromedp.CSS(area), "It crashes when"))
	second := srv.ask(t, map[string]any{"question": "Second: pick a release name", "source_agent": "namer"})
	p.waitCard(second)
	p.waitJS(`document.getElementById("announcer").textContent.includes("Second: pick a release name")`)
	if got := eval[string](p, `document.activeElement.closest("[data-id]")?.dataset.id + " " + document.activeElement.tagName`); got != first+" TEXTAREA" {
		t.Errorf("focus moved to %q while typing; want it to stay in the first card's textarea", got)
	}
	// Both have the default timeout: the first asked expires first, so it
	// stays on top (deadline soonest is the inbox's order).
	if got := eval[string](p, `document.querySelector(".card").dataset.id`); got != first {
		t.Errorf("top card is %s, want the one expiring first %s", got, first)
	}
	if got := eval[string](p, fmt.Sprintf(`document.querySelector(%s).getAttribute("aria-live")`, js(card(first)+" .countdown"))); got != "off" {
		t.Errorf("countdown aria-live = %q, want off", got)
	}
	if got := eval[string](p, `document.getElementById("announcer").getAttribute("aria-live")`); got != "polite" {
		t.Errorf("announcer aria-live = %q, want polite", got)
	}
}

func TestHistory(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	answered := srv.ask(t, map[string]any{
		"interaction_type": "single_choice", "question": "Which colour for the logo?",
		"options": []map[string]any{{"key": "indigo", "label": "Indigo"}, {"key": "teal", "label": "Teal"}},
	})
	cancelled := srv.ask(t, map[string]any{"question": "Never mind this one"})
	srv.ask(t, map[string]any{"question": "Still pending, not history"})
	p := openPage(t, srv)
	p.waitCard(answered)
	p.do(chromedp.Click(chromedp.CSS(card(answered)+` input[value="teal"]`)), ctrlEnter())
	p.waitCardText(answered, "Answer sent.")
	srv.call(t, "POST", "/api/v1/interactions/"+cancelled+"/cancel", map[string]any{"reason": "superseded"})

	p.do(chromedp.Click(chromedp.CSS("#tab-history")))
	item := func(id string) string { return fmt.Sprintf(`#history-list li[data-id=%q]`, id) }
	p.waitJS(fmt.Sprintf(`document.querySelector(%s) && document.querySelector(%s)`, js(item(answered)), js(item(cancelled))))
	text := eval[string](p, fmt.Sprintf(`document.querySelector(%s).textContent`, js(item(answered))))
	for _, want := range []string{"Answered", "Which colour for the logo?", "Teal", "By local via the web inbox"} {
		if !strings.Contains(text, want) {
			t.Errorf("history item %q lacks %q", text, want)
		}
	}
	text = eval[string](p, fmt.Sprintf(`document.querySelector(%s).textContent`, js(item(cancelled))))
	if !strings.Contains(text, "Cancelled by local: superseded") {
		t.Errorf("history item %q lacks the cancel reason", text)
	}
	if n := eval[int](p, `document.querySelectorAll("#history-list li").length`); n != 2 {
		t.Errorf("%d history items, want 2 (pending ones are not history)", n)
	}
	p.do(chromedp.SetValue(chromedp.CSS("#history-status"), "cancelled"), chromedp.Evaluate[chromedp.Void](`document.getElementById("history-status").dispatchEvent(new Event("change"))`))
	p.waitJS(`document.querySelectorAll("#history-list li").length === 1`)
}
