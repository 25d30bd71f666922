package ui_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl/internal/turns"
)

// onNewDocument runs src in the page before its own scripts, on every
// load.
func onNewDocument(src string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Call(ctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: src})
		return err
	})
}

// recordConnStates records in window.__states every connection state the
// top bar shows (its data-state), in order.
func recordConnStates() chromedp.Action[chromedp.Void] {
	return onNewDocument(`(() => {
		window.__states = [];
		new MutationObserver((records) => {
			for (const r of records) {
				if (r.target.id === "conn") window.__states.push(r.target.dataset.state);
			}
		}).observe(document, { subtree: true, attributes: true, attributeFilter: ["data-state"] });
	})();`)
}

// recordOutcomes records in window.__outcomes every outcome a card shows,
// as [id, text], in order.
func recordOutcomes() chromedp.Action[chromedp.Void] {
	return onNewDocument(`(() => {
		window.__outcomes = [];
		new MutationObserver(() => {
			for (const el of document.querySelectorAll("article.card")) {
				const text = el.querySelector(".outcome-text")?.textContent || "";
				const seen = window.__outcomes.filter((o) => o[0] === el.dataset.id);
				if (text && seen.at(-1)?.[1] !== text) window.__outcomes.push([el.dataset.id, text]);
			}
		}).observe(document, { subtree: true, childList: true, characterData: true });
	})();`)
}

// outcomes returns what the card of id has shown as its outcome.
func (p *page) outcomes(id string) []string {
	p.t.Helper()
	var got []string
	for _, o := range eval[[][]string](p, `window.__outcomes`) {
		if o[0] == id {
			got = append(got, o[1])
		}
	}
	return got
}

// after waits until d has passed since start; the wait is what the test
// is about (a connection held open), so nothing else marks its end.
func after(t *testing.T, start time.Time, d time.Duration) {
	t.Helper()
	select {
	case <-time.After(time.Until(start.Add(d))):
	case <-t.Context().Done():
		t.FailNow()
	}
}

// TestInboxStaysLive holds an inbox open for 65 s with a question pending
// from the start: past two of the server's pings (every 30 s) and well
// past its write timeout (10 s). The page shows Live the whole time, never
// Reconnecting, over one WebSocket, and a question asked after 35 s
// appears without a reload. (An inbox once dropped at the first ping
// after a replay: the replay's write left a deadline on the connection.)
func TestInboxStaysLive(t *testing.T) {
	if testing.Short() {
		t.Skip("holds a page open for over a minute")
	}
	turns.Idle(t) // over a minute, most of it waiting
	srv := newServer(t)
	waiting := srv.ask(t, map[string]any{"question": "Still there after a minute?"})
	p := openTabWithin(t, srv, false, 2*time.Minute, recordConnStates())
	p.waitJS(`document.getElementById("conn").dataset.state === "live"`)
	start := time.Now()
	p.waitCard(waiting)

	after(t, start, 35*time.Second)
	later := srv.ask(t, map[string]any{"question": "Asked after 35 seconds?"})
	p.waitCard(later)

	after(t, start, 65*time.Second)
	states := eval[[]string](p, `window.__states`)
	live := slices.Index(states, "live")
	if live < 0 || slices.ContainsFunc(states[live:], func(s string) bool { return s != "live" }) {
		t.Errorf("connection states over %s: %v, want Live from the start to the end", 65*time.Second, states)
	}
	if got := p.text("#conn-text"); got != "Live" {
		t.Errorf("the top bar says %q after %s, want Live", got, 65*time.Second)
	}
	if n := srv.faults.wsCount(); n != 1 {
		t.Errorf("the page opened %d WebSockets in %s, want 1", n, 65*time.Second)
	}
	p.waitCard(waiting)
}

// TestOwnAnswerKeepsItsOutcome: the live channel can tell the page that
// a question was answered (hitl:resolved, then hitl:cancel, which every
// ended question gets) before the page's own answer returns. The card
// ends as "Answer sent.", never as cancelled.
func TestOwnAnswerKeepsItsOutcome(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	id := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Approve the change?"})
	wait := srv.wait(t, id)
	p := openPage(t, srv, recordOutcomes())
	p.waitCard(id)

	release := srv.faults.holdPosts()
	p.do(chromedp.Click(chromedp.CSS(card(id) + ` button[data-answer="true"]`)))
	assertValue(t, awaitResult(t, wait), `true`)
	// The answer's messages came before this question's, on the same
	// connection: once its card is on the page, they were handled.
	next := srv.ask(t, map[string]any{"question": "And the next one?"})
	p.waitCard(next)
	release()
	p.waitCardText(id, "Answer sent.")
	if got := p.outcomes(id); slices.Contains(got, movedOn) || !slices.Contains(got, "Answer sent.") {
		t.Errorf("the card's outcomes: %q, want Answer sent. and never %q", got, movedOn)
	}
}

// TestDefaultAtDeadlineKeepsItsOutcome: a question answered with its
// default at the deadline says so, and the hitl:cancel that follows does
// not turn it into a cancelled one.
func TestDefaultAtDeadlineKeepsItsOutcome(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	p := openPage(t, srv, recordOutcomes())
	id := srv.ask(t, map[string]any{"question": "Release notes?", "timeout": 2, "on_timeout": "default", "default_response": "none"})
	p.waitCard(id)
	const defaultUsed = "— the agent got “none”."
	p.waitCardText(id, defaultUsed)
	p.waitCardGone(id)
	if got := p.outcomes(id); slices.Contains(got, movedOn) || !strings.HasSuffix(got[len(got)-1], defaultUsed) {
		t.Errorf("the card's outcomes: %q, want to end with %q, never %q", got, defaultUsed, movedOn)
	}
}

// TestReconnectResumes: a page that reconnects asks to resume from the
// last message it heard (?after=), and hears what it missed: an answer
// given elsewhere, and a question asked meanwhile.
func TestReconnectResumes(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	answered := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Answered while offline?"})
	p := openPage(t, srv)
	p.waitCard(answered)
	srv.faults.setWS(true)
	p.waitJS(`document.getElementById("conn").dataset.state === "reconnecting"`)
	srv.call(t, http.MethodPost, "/api/v1/interactions/"+answered+"/respond", map[string]any{"value": false})
	asked := srv.ask(t, map[string]any{"question": "Asked while offline?"})
	srv.faults.setWS(false)
	p.waitCardText(answered, "Rejected — chosen by local via the API.")
	p.waitCard(asked)
	queries := srv.faults.wsQueryLog()
	if last := queries[len(queries)-1]; strings.Contains(queries[0], "after=") || !strings.Contains(last, "after=") {
		t.Errorf("WebSocket queries %q: want none on the first connection, after= on the reconnect", queries)
	}
}

// TestReconnectWithoutResume: when the server cannot resume (it replays
// every pending question instead, as after its database was replaced),
// the page drops the cards that are not pending any more, with what
// became of them.
func TestReconnectWithoutResume(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	answered := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Answered while offline?"})
	cancelled := srv.ask(t, map[string]any{"question": "Cancelled while offline?"})
	kept := srv.ask(t, map[string]any{"question": "Still pending?"})
	p := openPage(t, srv, recordOutcomes())
	p.waitCard(answered)
	p.waitCard(cancelled)
	srv.faults.setNoResume(true)
	srv.faults.setWS(true)
	p.waitJS(`document.getElementById("conn").dataset.state === "reconnecting"`)
	srv.call(t, http.MethodPost, "/api/v1/interactions/"+answered+"/respond", map[string]any{"value": true})
	srv.call(t, http.MethodPost, "/api/v1/interactions/"+cancelled+"/cancel", nil)
	srv.faults.setWS(false)
	p.waitCardText(answered, "Approved — chosen by local via the API.")
	p.waitCardText(cancelled, movedOn)
	p.waitCardGone(answered)
	p.waitCardGone(cancelled)
	p.waitCard(kept)
	if got := p.outcomes(kept); len(got) != 0 {
		t.Errorf("the pending card shows %q, want no outcome", got)
	}
	if got := eval[string](p, `document.title`); got != "(1) hitl" {
		t.Errorf("title = %q, want (1) hitl", got)
	}
}
