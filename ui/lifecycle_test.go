package ui_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl/internal/turns"
)

// movedOn is the AI-Parrot HITL contract's message for a withdrawn question (§3.3).
const movedOn = "The agent moved on — this question expired."

func TestReloadKeepsCardAndDraft(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	id := srv.ask(t, map[string]any{"question": "Summarise the incident in one line"})
	wait := srv.wait(t, id)
	p := openPage(t, srv)
	area := card(id) + " textarea"
	p.waitCard(id)
	p.do(chromedp.SendKeys(chromedp.CSS(area), "Disk full on db-2, "))
	p.do(chromedp.Reload())
	p.waitCard(id)
	if got := eval[string](p, fmt.Sprintf(`document.querySelector(%s).value`, js(area))); got != "Disk full on db-2, " {
		t.Errorf("after a reload the draft is %q, want it kept", got)
	}
	p.do(chromedp.SendKeys(chromedp.CSS(area), "fixed"), ctrlEnter())
	assertValue(t, awaitResult(t, wait), `"Disk full on db-2, fixed"`)
}

func TestSecondTabSeesTheAnswer(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	id := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Merge the release branch?"})
	a := openPage(t, srv)
	b := openPage(t, srv)
	a.waitCard(id)
	b.waitCard(id)
	a.do(chromedp.Click(chromedp.CSS(card(id) + ` button[data-answer="true"]`)))
	b.waitCardText(id, "Approved — chosen by local via the web inbox.")
	b.waitCardGone(id)
	if got := eval[string](b, `document.title`); got != "hitl" {
		t.Errorf("title = %q after the only card left, want hitl", got)
	}
}

func TestAgentCancelRemovesCard(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	keep := srv.ask(t, map[string]any{"question": "Still there?"})
	id := srv.ask(t, map[string]any{"question": "Which branch should I rebase?"})
	p := openPage(t, srv)
	p.waitCard(id)
	p.waitJS(`document.title === "(2) hitl"`)
	srv.call(t, http.MethodPost, "/api/v1/interactions/"+id+"/cancel", map[string]any{})
	p.waitCardText(id, movedOn)
	p.waitJS(`document.title === "(1) hitl"`)
	p.waitCardGone(id)
	p.waitCard(keep)
}

func TestAnsweredThroughTheAPI(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	id := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Restart the cache?"})
	p := openPage(t, srv)
	p.waitCard(id)
	if status, body := srv.call(t, http.MethodPost, "/api/v1/interactions/"+id+"/respond", map[string]any{"value": "yes"}); status != http.StatusOK {
		t.Fatalf("respond: %d %s", status, body)
	}
	p.waitCardText(id, "Approved — chosen by local via the API.")
	p.waitCardGone(id)
}

func TestExpiryDisablesCard(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	// The question is asked once the page is live, so the deadline's clock
	// starts after the page has loaded (slow under load) and only the few
	// steps up to cutting the live channel must fit before it.
	p := openPage(t, srv)
	id := srv.ask(t, map[string]any{"question": "Quick: yes or no?", "timeout": 5})
	p.waitCard(id)
	if eval[bool](p, fmt.Sprintf(`document.querySelector(%s).disabled`, js(card(id)+" fieldset"))) {
		t.Fatal("the card is disabled before its deadline")
	}
	// With the live channel down the page cannot hear the server expire it:
	// the card must disable itself at the deadline.
	srv.faults.setWS(true)
	if eval[bool](p, fmt.Sprintf(`document.querySelector(%s).disabled`, js(card(id)+" fieldset"))) {
		t.Fatal("the deadline passed before the live channel was cut (the machine is too slow for this test's 5 s deadline)")
	}
	p.waitCardText(id, "Expired at ")
	if !eval[bool](p, fmt.Sprintf(`document.querySelector(%s).disabled`, js(card(id)+" fieldset"))) {
		t.Error("the card's controls are enabled after the deadline")
	}
	if got := eval[string](p, `document.title`); got != "hitl" {
		t.Errorf("title = %q with only an expired card, want hitl", got)
	}
	// Back online, the page learns the outcome.
	srv.faults.setWS(false)
	p.waitCardText(id, "the agent got no answer")
	p.waitCardGone(id)
}

func TestReconnectCatchesUp(t *testing.T) {
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

	p.waitJS(`document.getElementById("conn-text").textContent === "Reconnected"`)
	p.waitCardText(answered, "Rejected — chosen by local via the API.")
	p.waitCard(asked)
}

func TestFailedAnswerIsRetried(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	id := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Retry through a flaky network?"})
	wait := srv.wait(t, id)
	p := openPage(t, srv)
	p.waitCard(id)
	srv.faults.failNextPosts(2)
	p.do(chromedp.Click(chromedp.CSS(card(id) + ` button[data-answer="true"]`)))
	assertValue(t, awaitResult(t, wait), `true`)
	p.waitCardText(id, "Answer sent.")
}

func TestRetryButtonAfterRepeatedFailures(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	id := srv.ask(t, map[string]any{"question": "Answer through an outage?"})
	wait := srv.wait(t, id)
	p := openPage(t, srv)
	p.waitCard(id)
	srv.faults.failNextPosts(100)
	p.do(chromedp.SendKeys(chromedp.CSS(card(id)+" textarea"), "later"), ctrlEnter())
	p.waitCardText(id, "Retry")
	p.waitCardText(id, "could not be sent")
	srv.faults.failNextPosts(0)
	p.do(chromedp.Click(chromedp.CSS(card(id) + " .btn-retry")))
	assertValue(t, awaitResult(t, wait), `"later"`)
}

func TestLateAnswerShowsOutcome(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	other := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Answered elsewhere first?"})
	gone := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Cancelled before I click?"})
	p := openPage(t, srv)
	p.waitCard(other)
	p.waitCard(gone)
	// The page does not hear about either (live channel down) and answers
	// anyway: 409 and 410 are shown as outcomes, not errors.
	srv.faults.setWS(true)
	srv.call(t, http.MethodPost, "/api/v1/interactions/"+other+"/respond", map[string]any{"value": true})
	srv.call(t, http.MethodPost, "/api/v1/interactions/"+gone+"/cancel", nil)
	p.do(chromedp.Click(chromedp.CSS(card(other) + ` button[data-answer="false"]`)))
	p.waitCardText(other, "Someone else answered first.")
	p.waitCardText(other, "Answered by local via the API.")
	p.do(chromedp.Click(chromedp.CSS(card(gone) + ` button[data-answer="true"]`)))
	p.waitCardText(gone, movedOn)
}
