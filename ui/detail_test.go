package ui_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl/internal/turns"
)

// detail is the address of the detail view of id.
func (p *page) detail(id string) string {
	return p.srv.URL + "/i/" + id
}

// openDetail loads the detail view of id and waits until it shows the
// question.
func (p *page) openDetail(id, question string) {
	p.t.Helper()
	p.do(chromedp.Navigate(p.detail(id)))
	p.waitDetail(question)
}

// waitDetail waits until the detail view shows question as its title.
func (p *page) waitDetail(question string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf(`!document.getElementById("view-detail").hidden && document.getElementById("detail-title")?.textContent === %s`, js(question)))
}

// detailText is the text of the detail view's section cls (outcome,
// timeline, facts, session, answer, context).
func (p *page) detailText(cls string) string {
	p.t.Helper()
	return p.text(".detail-" + cls)
}

// waitDetailText waits until the detail view's section cls holds text.
func (p *page) waitDetailText(cls, text string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf(`(document.querySelector(".detail-%s")?.textContent || "").includes(%s)`, cls, js(text)))
}

// allowClipboard lets the page write and read the clipboard, as a person
// who allowed it would, and keeps the page focused (a headless tab is
// not), which the clipboard API requires.
func allowClipboard(origin string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, name := range []string{"clipboard-read", "clipboard-write"} {
			if _, err := chromedp.Call(ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
				Permission: &cdpbrowser.PermissionDescriptor{Name: name},
				Setting:    cdpbrowser.PermissionSettingGranted,
				Origin:     origin,
				// The tab's own context (the default one when empty).
				BrowserContextID: chromedp.FromContext(ctx).BrowserContextID,
			}); err != nil {
				return err
			}
		}
		_, err := chromedp.Call(ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true})
		return err
	})
}

// TestDetailView: a pending question's detail view shows its context,
// what happens at the deadline, its metadata, the same session's other
// questions and its timeline; it is answered there with the inbox's card,
// and then shows who answered, what and how, in the outcome and the
// timeline.
func TestDetailView(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	earlier := srv.ask(t, map[string]any{"question": "Which branch should I release from?", "session_id": "release-42", "timeout": 600})
	srv.call(t, http.MethodPost, "/api/v1/interactions/"+earlier+"/respond", map[string]any{"value": "main"})
	unrelated := srv.ask(t, map[string]any{"question": "A question of another session", "session_id": "other-7"})
	const question = "Deploy build 1432 to production?"
	id := srv.ask(t, map[string]any{
		"interaction_type": "approval",
		"question":         question,
		"context":          "All **212 checks** passed on `main`.",
		"session_id":       "release-42",
		"source_agent":     "deployer",
		"metadata":         map[string]any{"build": 1432, "commit": "9f3c2ab"},
		"timeout":          600,
	})
	result := srv.wait(t, id)

	p := openPage(t, srv)
	p.waitCard(id)
	p.openDetail(id, question)
	p.waitJS(`document.getElementById("conn").dataset.state === "live"`)
	if got := p.detailText("context"); !strings.Contains(got, "All 212 checks passed on main.") {
		t.Errorf("context = %q", got)
	}
	facts := p.detailText("facts")
	for _, want := range []string{"Agentdeployer", "Sessionrelease-42", "Asked bylocal via the API", "the question expires", "build1432", "commit9f3c2ab", "Interaction ID" + id} {
		if !strings.Contains(facts, want) {
			t.Errorf("details %q lack %q", facts, want)
		}
	}
	p.waitDetailText("session", "Which branch should I release from?")
	if got := p.detailText("session"); strings.Contains(got, "another session") || strings.Contains(got, question) {
		t.Errorf("the session's list = %q, want only the other question of release-42", got)
	}
	if href := eval[string](p, `document.querySelector(".session-link").getAttribute("href")`); href != "/i/"+earlier {
		t.Errorf("the session's link = %q, want /i/%s", href, earlier)
	}
	p.waitDetailText("timeline", "Asked by local via the API")
	_ = unrelated

	// Answered here, with the inbox's own card.
	p.do(chromedp.Click(chromedp.CSS(`.detail-answer .card .btn-approve`)))
	got := awaitResult(t, result)
	if got.Status != "answered" || string(got.Result.Value) != "true" || got.Result.Channel != "web" {
		t.Fatalf("the agent got %+v, want true answered via web", got)
	}
	p.waitDetailText("outcome", "Answered by local via the web inbox")
	p.waitDetailText("timeline", "Answered by local via the web inbox")
	if got := p.detailText("outcome"); !strings.Contains(got, "answered in") {
		t.Errorf("outcome %q does not say how long the answer took", got)
	}
	if p.text(".detail-answer") != "(none)" {
		t.Error("the answer form is still there after the question ended")
	}

	// The session's other question opens in the page, and Back returns.
	p.do(chromedp.Click(chromedp.CSS(".session-link")))
	p.waitDetail("Which branch should I release from?")
	p.waitDetailText("outcome", "Answered by local via the API")
	if got := eval[string](p, `location.pathname`); got != "/i/"+earlier {
		t.Errorf("address = %q, want /i/%s", got, earlier)
	}
	p.do(chromedp.NavigateBack())
	p.waitDetail(question)
}

// TestCopyLink: a card's Copy link puts the address of its detail view on
// the clipboard, and so does a History row's; the address opens it.
func TestCopyLink(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	const question = "Rotate the signing keys tonight?"
	id := srv.ask(t, map[string]any{"interaction_type": "approval", "question": question})
	p := openPage(t, srv, allowClipboard(srv.URL))
	p.waitCard(id)
	if got := eval[string](p, fmt.Sprintf(`document.querySelector(%s).getAttribute("aria-label")`, js(in(id, ".btn-copy-link")))); got != "Copy link: "+question {
		t.Errorf("Copy link's name = %q", got)
	}
	p.click(id, ".btn-copy-link")
	p.waitJS(fmt.Sprintf(`document.querySelector(%s).textContent === "Link copied"`, js(in(id, ".btn-copy-link"))))
	want := srv.URL + "/i/" + id
	if got := eval[string](p, `navigator.clipboard.readText()`); got != want {
		t.Fatalf("clipboard = %q, want %q", got, want)
	}

	srv.call(t, http.MethodPost, "/api/v1/interactions/"+id+"/cancel", map[string]any{"reason": "the agent found a safer plan"})
	p.do(chromedp.Navigate(srv.URL + "/#history"))
	row := fmt.Sprintf(`.h-item[data-id=%q]`, id)
	p.waitJS(fmt.Sprintf(`!!document.querySelector(%s)`, js(row)))
	p.do(chromedp.Evaluate[chromedp.Void](`navigator.clipboard.writeText("")`, chromedp.EvalAwaitPromise))
	p.do(chromedp.Click(chromedp.CSS(row + " .btn-copy-link")))
	p.waitJS(fmt.Sprintf(`document.querySelector(%s).textContent === "Link copied"`, js(row+" .btn-copy-link")))
	if got := eval[string](p, `navigator.clipboard.readText()`); got != want {
		t.Fatalf("clipboard after History's Copy link = %q, want %q", got, want)
	}
	p.do(chromedp.Navigate(want))
	p.waitDetail(question)
	p.waitDetailText("outcome", "Cancelled by local: the agent found a safer plan")
}

// TestDetailLook runs axe-core on the detail view of an answered form
// and of a pending approval, at 1280 and 375 px, in both themes; with
// HITL_UPDATE_SCREENSHOTS=1 it writes docs/detail-light.png.
func TestDetailLook(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	srv := newServer(t)
	ids := askOneOfEach(t, srv)
	form := ids[1]
	srv.call(t, http.MethodPost, "/api/v1/interactions/"+form+"/respond", map[string]any{"value": map[string]any{
		"company": "Initech", "email": "ap@initech.example", "amount": 1240.5, "currency": "USD", "urgent": true,
	}})
	// Its own pending approval, due in an hour: the subtests may wait
	// minutes for their turn at the browser (internal/turns), longer than
	// the four minutes askOneOfEach's approval has.
	approval := srv.ask(t, map[string]any{
		"interaction_type": "approval", "question": "Deploy build 1432 to production?", "timeout": 3600,
		"options": []map[string]any{{"key": "deploy", "label": "Deploy"}, {"key": "hold", "label": "Hold"}}, "source_agent": "deployer",
	})
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
				p.openDetail(form, "Fill in the vendor details for purchase order PO-2291")
				p.waitDetailText("outcome", "Answered by local via the API")
				// The form's answer by its schema's titles.
				for _, want := range []string{"CompanyInitech", "Billing emailap@initech.example", "Amount1240.5", "CurrencyUSD", "UrgentYes"} {
					if got := p.detailText("outcome"); !strings.Contains(got, want) {
						t.Errorf("outcome %q lacks %q", got, want)
					}
				}
				p.waitDetailText("timeline", "Answered by local via the API")
				checkAxe(t, p)
				if vp.w < 400 {
					checkNarrow(t, p)
				}
				if vp.name == "wide" && os.Getenv("HITL_UPDATE_SCREENSHOTS") != "" {
					shoot(t, p, fmt.Sprintf("detail-%s.png", scheme))
				}
				p.do(chromedp.Navigate(p.detail(approval)))
				p.waitDetail("Deploy build 1432 to production?")
				p.waitJS(`!!document.querySelector(".detail-answer .card")`)
				p.waitDetailText("timeline", "Asked by local")
				checkAxe(t, p)
				if vp.w < 400 {
					checkNarrow(t, p)
				}
			})
		}
	}
}

// shoot writes a screenshot of the whole page to docs/name.
func shoot(t *testing.T, p *page, name string) {
	t.Helper()
	p.do(chromedp.Evaluate[chromedp.Void](`document.activeElement?.blur(); window.scrollTo(0, 0)`))
	png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	writeDoc(t, name, png)
}
