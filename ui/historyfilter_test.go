package ui_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl/internal/turns"
)

// waitHistory waits until History lists exactly want, in order.
func (p *page) waitHistory(want ...string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf(`document.getElementById("history-list").getAttribute("aria-busy") === "false" &&
		JSON.stringify([...document.querySelectorAll("#history-list .h-question")].map(e => e.textContent)) === %s`, js(jsonList(want))))
}

func jsonList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = js(x)
	}
	return "[" + strings.Join(q, ",") + "]"
}

// TestHistoryFilters: History searches question and context, filters by
// outcome, agent, type and channel, says how long each answer took, and
// shows a form's answer by its schema's titles.
func TestHistoryFilters(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	respond := func(id string, value any, channel string) {
		t.Helper()
		if status, body := srv.call(t, http.MethodPost, "/api/v1/interactions/"+id+"/respond", map[string]any{"value": value, "channel": channel}); status != http.StatusOK {
			t.Fatalf("respond: %d %s", status, body)
		}
	}
	deploy := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Deploy build 1432?", "source_agent": "deployer"})
	respond(deploy, true, "web")
	form := srv.ask(t, map[string]any{
		"interaction_type": "form", "question": "Vendor details for PO-2291", "source_agent": "procurement",
		"context":     "The invoice from Initech is attached.",
		"form_schema": map[string]any{"type": "object", "properties": map[string]any{"company": map[string]any{"type": "string", "title": "Company name"}}},
	})
	respond(form, map[string]any{"company": "Initech"}, "api")
	rollback := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Roll back api-7?", "source_agent": "deployer"})
	srv.call(t, http.MethodPost, "/api/v1/interactions/"+rollback+"/cancel", map[string]any{"reason": "the agent found a safer plan"})
	srv.ask(t, map[string]any{"question": "Still pending, not history", "source_agent": "deployer"})

	p := openPage(t, srv)
	p.do(chromedp.Navigate(srv.URL + "/#history"))
	p.waitHistory("Roll back api-7?", "Vendor details for PO-2291", "Deploy build 1432?")
	formRow := fmt.Sprintf(`.h-item[data-id=%q]`, form)
	if got := p.text(formRow); !strings.Contains(got, "Company nameInitech") || !strings.Contains(got, "· in ") {
		t.Errorf("the form's row %q: want its answer by the schema's title and the time to answer", got)
	}
	if got := p.text(fmt.Sprintf(`.h-item[data-id=%q]`, rollback)); !strings.Contains(got, "the agent found a safer plan") {
		t.Errorf("the cancelled row %q lacks the agent's reason", got)
	}

	// Agent: the choices are the agents that asked.
	p.waitJS(`[...document.getElementById("history-agent").options].map(o => o.value).join() === ",deployer,procurement"`)
	p.setSelect("#history-agent", "deployer")
	p.waitHistory("Roll back api-7?", "Deploy build 1432?")
	p.setSelect("#history-status", "answered")
	p.waitHistory("Deploy build 1432?")
	p.do(chromedp.Click(chromedp.CSS("#history-clear")))
	p.waitHistory("Roll back api-7?", "Vendor details for PO-2291", "Deploy build 1432?")

	p.setSelect("#history-type", "form")
	p.waitHistory("Vendor details for PO-2291")
	p.setSelect("#history-type", "")
	p.setSelect("#history-status", "cancelled")
	p.waitHistory("Roll back api-7?")
	p.setSelect("#history-status", "")
	// The channel through which a question was answered, or cancelled.
	p.setSelect("#history-channel", "web")
	p.waitHistory("Deploy build 1432?")
	p.setSelect("#history-channel", "api")
	p.waitHistory("Roll back api-7?", "Vendor details for PO-2291")
	p.setSelect("#history-channel", "")

	// Search: the context counts, and nothing matching says so.
	p.do(chromedp.SendKeys(chromedp.CSS("#history-q"), "initech"))
	p.waitHistory("Vendor details for PO-2291")
	p.do(chromedp.SendKeys(chromedp.CSS("#history-q"), " nothing like this"))
	p.waitHistory()
	p.waitJS(`document.getElementById("history-empty").textContent === "Nothing matches these filters." && document.getElementById("history-empty").checkVisibility()`)

	// A row's question opens its detail view.
	p.do(chromedp.Click(chromedp.CSS("#history-clear")))
	p.waitHistory("Roll back api-7?", "Vendor details for PO-2291", "Deploy build 1432?")
	p.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`.h-item[data-id=%q] .h-link`, deploy))))
	p.waitDetail("Deploy build 1432?")
	if got := p.text("#detail-back"); got != "Back to History" {
		t.Errorf("back link = %q, want Back to History", got)
	}
	p.do(chromedp.Click(chromedp.CSS("#detail-back")))
	p.waitJS(`!document.getElementById("view-history").hidden && location.hash === "#history"`)
}

// TestHistoryLook runs axe-core on History with filters, at 1280 and
// 375 px, in both themes.
func TestHistoryLook(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	srv := newServer(t)
	ids := askOneOfEach(t, srv)
	srv.call(t, http.MethodPost, "/api/v1/interactions/"+ids[1]+"/respond", map[string]any{"value": map[string]any{
		"company": "Initech", "email": "ap@initech.example", "amount": 1240.5,
	}})
	srv.call(t, http.MethodPost, "/api/v1/interactions/"+ids[4]+"/respond", map[string]any{"value": "deploy"})
	srv.call(t, http.MethodPost, "/api/v1/interactions/"+ids[0]+"/cancel", map[string]any{"reason": "the agent wrote it itself"})
	for _, vp := range []struct {
		name string
		w, h int64
	}{{"wide", 1280, 900}, {"phone", 375, 812}} {
		for _, scheme := range []string{"light", "dark"} {
			t.Run(vp.name+"-"+scheme, func(t *testing.T) {
				turns.Parallel(t)
				view := chromedp.EmulateViewport(vp.w, vp.h)
				if vp.w < 400 {
					view = chromedp.EmulateViewport(vp.w, vp.h, chromedp.EmulateMobile)
				}
				p := openPage(t, srv, view, emulateMedia(scheme))
				p.do(chromedp.Navigate(srv.URL + "/#history"))
				p.waitJS(`document.querySelectorAll("#history-list .h-item").length === 3 && document.getElementById("history-agent").options.length > 1`)
				checkAxe(t, p)
				if vp.w < 400 {
					checkNarrow(t, p)
				}
			})
		}
	}
}
