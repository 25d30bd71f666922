package ui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/hitl-sh/hitl/internal/turns"
)

// askAction asks for a review of the action name with args, as the agent
// claude-code, with the extra fields of req, and returns its id.
func (s *hitlServer) askAction(t *testing.T, name string, args map[string]any, req map[string]any) string {
	t.Helper()
	if req == nil {
		req = map[string]any{}
	}
	req["interaction_type"] = "action"
	req["action"] = map[string]any{"name": name, "args": args}
	if _, ok := req["source_agent"]; !ok {
		req["source_agent"] = "claude-code"
	}
	return s.ask(t, req)
}

// in returns the selector of what matches sel in the card of id.
func in(id, sel string) string {
	return card(id) + " " + sel
}

// click clicks what sel matches in the card of id.
func (p *page) click(id, sel string) {
	p.t.Helper()
	p.do(chromedp.Click(chromedp.CSS(in(id, sel))))
}

// waitFocus waits until what sel matches in the card of id has the
// focus.
func (p *page) waitFocus(id, sel string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf(`document.activeElement === document.querySelector(%s)`, js(in(id, sel))))
}

// waitOutcome waits until the card of id has shown an outcome holding
// text (recordOutcomes keeps them, so the card may have left since).
func (p *page) waitOutcome(id, text string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf(`(window.__outcomes || []).some(o => o[0] === %s && o[1].includes(%s))`, js(id), js(text)))
}

// stillPending checks that the agent's question was not answered.
func (s *hitlServer) stillPending(t *testing.T, id string) {
	t.Helper()
	if got := s.status(t, id); got != "pending" {
		t.Fatalf("status %s, want pending: the page must not have answered", got)
	}
}

// TestActionApprove: a Bash card shows the command exactly, in a
// focusable, labelled region, with the tool, the agent and the session;
// Approve answers {"decision": "approve"}, and the card says by whom.
func TestActionApprove(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	const command = "git log --oneline -5 | tee /tmp/log.txt"
	id := srv.askAction(t, "Bash", map[string]any{"command": command, "description": "Show recent commits"},
		map[string]any{"session_id": "sess-0192"})
	wait := srv.wait(t, id)
	p := openPage(t, srv, recordOutcomes())
	p.waitCard(id)
	if got := p.text(in(id, ".code-command code")); got != command {
		t.Errorf("command shown as %q, want %q", got, command)
	}
	region := eval[map[string]string](p, fmt.Sprintf(`(() => { const e = document.querySelector(%s);
		return {role: e.getAttribute("role"), tabindex: e.getAttribute("tabindex"), label: e.getAttribute("aria-label")}; })()`, js(in(id, ".code-command pre"))))
	if want := map[string]string{"role": "region", "tabindex": "0", "label": "Command: git log --oneline -5 | tee /tmp/log.txt"}; !mapsEqual(region, want) {
		t.Errorf("command block %v, want %v", region, want)
	}
	head := p.text(in(id, ".card-head"))
	for _, want := range []string{"Action", "Bash", "claude-code", "sess-0192"} {
		if !strings.Contains(head, want) {
			t.Errorf("card head %q lacks %q", head, want)
		}
	}
	// The arguments besides the command are listed.
	if got := p.text(in(id, ".args-kv")); !strings.Contains(got, "description") || !strings.Contains(got, "Show recent commits") {
		t.Errorf("other arguments shown as %q", got)
	}
	p.click(id, ".btn-approve")
	assertValue(t, awaitResult(t, wait), `{"decision": "approve"}`)
	p.waitOutcome(id, "Approved by local via the web inbox.")
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestActionAnsweredElsewhere: an action rejected through the API leaves
// the card saying who rejected it, through which channel, and why.
func TestActionAnsweredElsewhere(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	id := srv.askAction(t, "Bash", map[string]any{"command": "make deploy"}, nil)
	p := openPage(t, srv, recordOutcomes())
	p.waitCard(id)
	if code, body := srv.call(t, http.MethodPost, "/api/v1/interactions/"+id+"/respond",
		map[string]any{"value": map[string]any{"decision": "reject", "message": "not on a Friday"}}); code != http.StatusOK {
		t.Fatalf("respond: %d %s", code, body)
	}
	p.waitOutcome(id, "Rejected by local via the API: not on a Friday")
}

// pushSchema is an args_schema whose edit the page lets through and the
// server refuses (the page does not check "not").
const pushSchema = `{
	"type": "object",
	"required": ["command"],
	"properties": {
		"command": {"type": "string", "title": "Command", "not": {"pattern": "--force"}},
		"timeout": {"type": "integer", "title": "Timeout (ms)", "minimum": 1000}
	}
}`

// TestActionEditWithForm: Edit opens the form args_schema describes,
// filled with the proposal; an edit the server refuses shows its reason
// at the field; the changes are previewed; the arguments the schema does
// not describe are kept; the outcome and the history name the change.
func TestActionEditWithForm(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	id := srv.askAction(t, "Bash", map[string]any{"command": "git push origin main", "timeout": 60000, "description": "Push the release"},
		map[string]any{"args_schema": json.RawMessage(pushSchema)})
	wait := srv.wait(t, id)
	p := openPage(t, srv, recordOutcomes())
	p.waitCard(id)
	p.click(id, ".btn-edit")
	field := in(id, `.panel-edit input[name="/command"]`)
	p.waitFocus(id, `.panel-edit input[name="/command"]`)
	if got := eval[string](p, fmt.Sprintf(`document.querySelector(%s).value`, js(field))); got != "git push origin main" {
		t.Errorf("command field holds %q, want the proposal", got)
	}
	if got := eval[string](p, fmt.Sprintf(`document.querySelector(%s).value`, js(in(id, `.panel-edit input[name="/timeout"]`)))); got != "60000" {
		t.Errorf("timeout field holds %q, want the proposal", got)
	}
	// Refused by the server: its reason at the field, nothing answered.
	p.typeInto(field, "git push --force origin main")
	p.waitJS(fmt.Sprintf(`(document.querySelector(%s)?.textContent || "").includes("--force")`, js(in(id, ".edit-changes .diff-add"))))
	p.click(id, ".btn-submit")
	p.waitJS(fmt.Sprintf(`document.querySelector(%s).getAttribute("aria-invalid") === "true"`, js(field)))
	errText := p.text(in(id, `.panel-edit .field[data-path="/command"] .field-error`))
	if errText == "" || errText == "(none)" {
		t.Error("the server's refusal is not shown at the command field")
	}
	p.waitCardText(id, "Some fields need attention.")
	srv.stillPending(t, id)
	// The preview follows the edit.
	p.typeInto(field, "git push origin release")
	p.waitJS(fmt.Sprintf(`(document.querySelector(%s)?.textContent || "").includes("git push origin release")`, js(in(id, ".edit-changes .diff-add"))))
	if got := p.text(in(id, ".edit-changes .diff-del")); !strings.Contains(got, "git push origin main") {
		t.Errorf("the preview's removed line is %q", got)
	}
	p.do(ctrlEnter())
	assertValue(t, awaitResult(t, wait), `{"decision": "edit", "args": {"command": "git push origin release", "timeout": 60000, "description": "Push the release"}}`)
	p.waitOutcome(id, "✏️ Edited and approved by local via the web inbox: command changed.")

	// The history shows the action, the decision and the diff.
	p.do(chromedp.Navigate(srv.URL + "/#history"))
	p.waitJS(fmt.Sprintf(`document.querySelector('#history-list li[data-id=%q]')`, id))
	item := fmt.Sprintf(`#history-list li[data-id=%q]`, id)
	got := p.text(item)
	for _, want := range []string{"Bash", "Edited and approved", "command changed", "By local via the web inbox"} {
		if !strings.Contains(got, want) {
			t.Errorf("history item %q lacks %q", got, want)
		}
	}
	lines := diffLines(p, item+" .changes")
	if want := []string{"-git push origin main", "+git push origin release"}; !slices.Equal(lines, want) {
		t.Errorf("history diff %q, want %q", lines, want)
	}
}

// TestActionEditJSON: without a schema, Edit is a JSON editor: what is not
// an object is refused in the page, what the server refuses (a repeated
// key, which JSON.parse would hide) shows its reason at the field, and the
// edit goes as typed.
func TestActionEditJSON(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	id := srv.askAction(t, "send_email", map[string]any{"to": "ops@example.com", "subject": "Deploy done"}, nil)
	wait := srv.wait(t, id)
	p := openPage(t, srv, recordOutcomes())
	p.waitCard(id)
	p.click(id, ".btn-edit")
	area := in(id, `textarea[name="edit-args"]`)
	p.waitFocus(id, `textarea[name="edit-args"]`)
	var shown map[string]any
	if err := json.Unmarshal([]byte(eval[string](p, fmt.Sprintf(`document.querySelector(%s).value`, js(area)))), &shown); err != nil ||
		shown["to"] != "ops@example.com" || shown["subject"] != "Deploy done" || len(shown) != 2 {
		t.Errorf("the editor holds %v (%v), want the proposed arguments", shown, err)
	}
	errSel := in(id, ".panel-edit .field-error")

	p.typeInto(area, "[1, 2]")
	p.do(ctrlEnter())
	p.waitJS(fmt.Sprintf(`document.querySelector(%s).textContent.includes("Enter a JSON object")`, js(errSel)))
	srv.stillPending(t, id)

	p.typeInto(area, `{"to": "ops@example.com", "to": "all@example.com", "subject": "Deploy done"}`)
	p.do(ctrlEnter())
	p.waitJS(fmt.Sprintf(`document.querySelector(%s).textContent.includes("twice")`, js(errSel)))
	if got := eval[string](p, fmt.Sprintf(`document.querySelector(%s).getAttribute("aria-invalid")`, js(area))); got != "true" {
		t.Errorf("the editor's aria-invalid is %q after the server refused it", got)
	}
	srv.stillPending(t, id)

	p.typeInto(area, `{"to": "team@example.com", "subject": "Deploy done"}`)
	p.click(id, ".btn-submit")
	assertValue(t, awaitResult(t, wait), `{"decision": "edit", "args": {"to": "team@example.com", "subject": "Deploy done"}}`)
	p.waitOutcome(id, "Edited and approved by local via the web inbox: to changed.")
}

// TestActionReject: Reject opens the reason field with the focus in it; a
// reason the agent requires is asked for before anything is sent.
func TestActionReject(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	id := srv.askAction(t, "Bash", map[string]any{"command": "rm -rf build/"}, map[string]any{"reject_requires_message": true})
	wait := srv.wait(t, id)
	p := openPage(t, srv, recordOutcomes())
	p.waitCard(id)
	p.click(id, ".btn-reject")
	p.waitFocus(id, `textarea[name="reject-message"]`)
	if got := p.text(in(id, ".panel-reject label")); !strings.Contains(got, "required") {
		t.Errorf("reason label %q does not say it is required", got)
	}
	p.do(ctrlEnter())
	p.waitCardText(id, "Say why")
	srv.stillPending(t, id)
	p.do(chromedp.SendKeys(chromedp.CSS(in(id, `textarea[name="reject-message"]`)), "build/ holds the release artefacts"), ctrlEnter())
	assertValue(t, awaitResult(t, wait), `{"decision": "reject", "message": "build/ holds the release artefacts"}`)
	p.waitOutcome(id, "Rejected by local via the web inbox: build/ holds the release artefacts")
}

// TestActionRespond: only the decisions the agent allows have buttons;
// Respond sends a reply instead of the action running.
func TestActionRespond(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	id := srv.askAction(t, "Bash", map[string]any{"command": "npm publish"}, map[string]any{"decisions": []string{"approve", "respond"}})
	wait := srv.wait(t, id)
	p := openPage(t, srv, recordOutcomes())
	p.waitCard(id)
	buttons := eval[[]string](p, fmt.Sprintf(`[...document.querySelectorAll(%s)].map(b => b.textContent)`, js(in(id, ".actions-buttons button"))))
	if want := []string{"Always allow…", "Respond", "Approve"}; !slices.Equal(buttons, want) {
		t.Errorf("buttons %q, want %q", buttons, want)
	}
	p.click(id, ".btn-respond")
	p.waitFocus(id, `textarea[name="respond-message"]`)
	p.click(id, ".btn-submit")
	p.waitCardText(id, "Type a reply first.")
	srv.stillPending(t, id)
	p.do(chromedp.SendKeys(chromedp.CSS(in(id, `textarea[name="respond-message"]`)), "Bump the version first."))
	p.click(id, ".btn-submit")
	assertValue(t, awaitResult(t, wait), `{"decision": "respond", "message": "Bump the version first."}`)
	p.waitOutcome(id, "Answered instead by local via the web inbox: Bump the version first.")
}

// TestActionKeyboard: everything without the mouse. The new card has the
// focus; Tab reaches the buttons; Enter on Reject opens the reason, Escape
// closes it and gives the focus back to Reject, where Ctrl+Enter opens it
// again (and does not approve); Ctrl+Enter sends the open panel, and on a
// card with none open, approves.
func TestActionKeyboard(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	first := srv.askAction(t, "Bash", map[string]any{"command": "kubectl rollout restart deploy/web"}, nil)
	waitFirst := srv.wait(t, first)
	p := openPage(t, srv)
	p.waitJS(fmt.Sprintf(`document.activeElement?.dataset?.id === %s`, js(first)))
	// Tab: Copy link, the command's region, then the buttons, in order.
	p.do(chromedp.KeyEvent(kb.Tab))
	var order []string
	for range 6 {
		p.do(chromedp.KeyEvent(kb.Tab))
		order = append(order, eval[string](p, `(document.activeElement.className.match(/btn-(always|respond|edit|reject|approve)/) || [document.activeElement.getAttribute("role") || document.activeElement.tagName])[0]`))
	}
	if want := []string{"region", "btn-always", "btn-respond", "btn-edit", "btn-reject", "btn-approve"}; !slices.Equal(order, want) {
		t.Errorf("Tab order %q, want %q", order, want)
	}
	p.do(chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift))) // back to Reject
	p.waitFocus(first, ".btn-reject")
	p.do(chromedp.KeyEvent(kb.Enter))
	p.waitFocus(first, `textarea[name="reject-message"]`)
	p.do(chromedp.KeyEvent("not during business hours"), chromedp.KeyEvent(kb.Escape))
	p.waitFocus(first, ".btn-reject")
	if !eval[bool](p, fmt.Sprintf(`document.querySelector(%s).hidden`, js(in(first, ".panel-reject")))) {
		t.Error("Escape left the reason panel open")
	}
	// Ctrl+Enter on Reject opens it too: it never approves.
	p.do(ctrlEnter())
	p.waitFocus(first, `textarea[name="reject-message"]`)
	srv.stillPending(t, first)
	// Escape from the panel's buttons closes it as well.
	p.do(chromedp.KeyEvent(kb.Tab))
	p.waitFocus(first, ".btn-cancel")
	p.do(chromedp.KeyEvent(kb.Escape))
	p.waitFocus(first, ".btn-reject")
	p.do(chromedp.KeyEvent(kb.Enter))
	p.waitFocus(first, `textarea[name="reject-message"]`)
	p.do(ctrlEnter())
	assertValue(t, awaitResult(t, waitFirst), `{"decision": "reject", "message": "not during business hours"}`)

	second := srv.askAction(t, "Bash", map[string]any{"command": "kubectl get pods"}, nil)
	waitSecond := srv.wait(t, second)
	p.waitJS(fmt.Sprintf(`document.activeElement?.dataset?.id === %s`, js(second)))
	p.do(ctrlEnter())
	assertValue(t, awaitResult(t, waitSecond), `{"decision": "approve"}`)
}
