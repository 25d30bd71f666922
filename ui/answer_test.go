package ui_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl/internal/turns"
)

// assertValue checks the agent got an answer with the given value via web.
func assertValue(t *testing.T, got interaction, want string) {
	t.Helper()
	if got.Status != "answered" || got.Result == nil {
		t.Fatalf("agent got status %q, want answered", got.Status)
	}
	var g, w any
	if err := json.Unmarshal(got.Result.Value, &g); err != nil {
		t.Fatalf("decode value %s: %v", got.Result.Value, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("decode want %s: %v", want, err)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("value (-want +got):\n%s", diff)
	}
	if got.Result.Channel != "web" {
		t.Errorf("channel = %q, want web", got.Result.Channel)
	}
}

func TestApprovalByClick(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	id := srv.ask(t, map[string]any{
		"interaction_type": "approval",
		"question":         "Deploy build 1432 to production?",
		"options":          []map[string]any{{"key": "ship", "label": "Ship it"}, {"key": "hold", "label": "Hold"}},
	})
	wait := srv.wait(t, id)
	p := openPage(t, srv)
	p.waitCard(id)
	p.do(chromedp.Click(chromedp.CSS(card(id) + ` button[data-answer="false"]`)))
	assertValue(t, awaitResult(t, wait), `false`)
	p.waitCardText(id, "Answer sent.")
	p.waitCardGone(id)
}

func TestApprovalByKeyboard(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	id := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Rotate the API keys now?"})
	wait := srv.wait(t, id)
	p := openPage(t, srv)
	// The newest card takes the focus when nobody is typing; Tab goes to
	// Copy link, Reject, then Approve; Ctrl+Enter submits the focused
	// button.
	p.waitJS(fmt.Sprintf(`document.activeElement?.dataset?.id === %s`, js(id)))
	p.do(chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Tab))
	if got := eval[string](p, `document.activeElement.textContent`); got != "Approve" {
		t.Fatalf("focused %q after three Tabs, want the Approve button", got)
	}
	p.do(ctrlEnter())
	assertValue(t, awaitResult(t, wait), `true`)
}

func TestSingleChoicePills(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	id := srv.ask(t, map[string]any{
		"interaction_type": "single_choice",
		"question":         "Which environment?",
		"options":          []any{"Staging", map[string]any{"key": "prod", "label": "Production", "description": "careful"}},
	})
	wait := srv.wait(t, id)
	p := openPage(t, srv)
	p.waitCard(id)
	if n := eval[int](p, fmt.Sprintf(`document.querySelectorAll(%s).length`, js(card(id)+" .choices-pills input[type=radio]"))); n != 2 {
		t.Fatalf("%d radio pills, want 2", n)
	}
	// Enter alone on a radio does nothing; Ctrl+Enter submits.
	p.do(chromedp.Click(chromedp.CSS(card(id)+` input[value="prod"]`)), ctrlEnter())
	assertValue(t, awaitResult(t, wait), `"prod"`)
}

func TestSingleChoiceListByArrows(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	var opts []map[string]any
	for i := 1; i <= 7; i++ {
		opts = append(opts, map[string]any{"key": fmt.Sprintf("k%d", i), "label": fmt.Sprintf("Option %d", i), "description": "more words"})
	}
	id := srv.ask(t, map[string]any{"interaction_type": "single_choice", "question": "Pick the third", "options": opts})
	wait := srv.wait(t, id)
	// Without motion: the card's smooth scroll into view, slow on a busy
	// machine, would move the submit button under the click.
	p := openPage(t, srv, emulateMedia("light"))
	p.waitCard(id)
	if n := eval[int](p, fmt.Sprintf(`document.querySelectorAll(%s).length`, js(card(id)+" .choices-list input[type=radio]"))); n != 7 {
		t.Fatalf("%d radios in a list, want 7", n)
	}
	// Submitting with nothing chosen is refused in the page.
	p.do(chromedp.Click(chromedp.CSS(card(id) + " button[type=submit]")))
	p.waitCardText(id, "Choose an option.")
	// Focus is on the first radio now: arrows move the choice.
	p.do(chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowDown), ctrlEnter())
	assertValue(t, awaitResult(t, wait), `"k3"`)
}

func TestMultiChoice(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	id := srv.ask(t, map[string]any{
		"interaction_type": "multi_choice",
		"question":         "Which customers get the apology email?",
		"options":          []string{"Acme", "Globex", "Initech", "Umbrella"},
		"default_response": []string{"acme"},
	})
	wait := srv.wait(t, id)
	p := openPage(t, srv)
	p.waitCard(id)
	if !eval[bool](p, fmt.Sprintf(`document.querySelector(%s).checked`, js(card(id)+` input[value="acme"]`))) {
		t.Error("the default_response option is not pre-checked")
	}
	p.do(
		chromedp.Click(chromedp.CSS(card(id)+` input[value="umbrella"]`)),
		chromedp.Click(chromedp.CSS(card(id)+` input[value="acme"]`)),
		chromedp.Click(chromedp.CSS(card(id)+` input[value="globex"]`)),
		chromedp.Click(chromedp.CSS(card(id)+` button[type="submit"]`)),
	)
	assertValue(t, awaitResult(t, wait), `["globex", "umbrella"]`)
}

func TestFreeText(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	id := srv.ask(t, map[string]any{
		"question":         "What is the one-time code?",
		"default_response": "six digits",
	})
	wait := srv.wait(t, id)
	p := openPage(t, srv)
	p.waitCard(id)
	area := card(id) + " textarea"
	if got := eval[string](p, fmt.Sprintf(`document.querySelector(%s).placeholder`, js(area))); got != "six digits" {
		t.Errorf("placeholder = %q, want the default_response", got)
	}
	p.do(chromedp.Click(chromedp.CSS(area)), ctrlEnter())
	p.waitCardText(id, "Type an answer first.")
	p.do(chromedp.SendKeys(chromedp.CSS(area), "481 516"), ctrlEnter())
	assertValue(t, awaitResult(t, wait), `"481 516"`)
}

// formSchema exercises every kind of field the form renders.
const formSchema = `{
	"type": "object",
	"required": ["name", "email", "count", "plan", "address"],
	"properties": {
		"name":       {"type": "string", "title": "Full name", "minLength": 2, "maxLength": 40},
		"email":      {"type": "string", "format": "email", "title": "Email"},
		"count":      {"type": "integer", "title": "Seats", "minimum": 1, "maximum": 10},
		"plan":       {"type": "string", "title": "Plan", "enum": ["starter", "team", "enterprise"]},
		"start":      {"type": "string", "format": "date", "title": "Start date", "default": "2026-06-01"},
		"newsletter": {"type": "boolean", "title": "Newsletter", "description": "Monthly, no spam."},
		"tags":       {"type": "array", "title": "Tags", "items": {"type": "string", "enum": ["alpha", "beta", "gamma"]}},
		"address": {
			"type": "object", "title": "Address", "required": ["city"],
			"properties": {
				"city": {"type": "string", "title": "City"},
				"zip":  {"type": "string", "title": "Postcode", "pattern": "^[0-9]{5}$"}
			}
		},
		"ip":   {"type": "string", "format": "ipv4", "title": "Office IP"},
		"when": {"type": "string", "format": "date-time", "title": "Kick-off", "default": "2026-06-01T09:30:00Z"},
		"site": {"type": "string", "format": "uri", "title": "Website"}
	}
}`

func TestForm(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	id := srv.ask(t, map[string]any{
		"interaction_type": "form",
		"question":         "Set up the new account",
		"form_schema":      json.RawMessage(formSchema),
	})
	wait := srv.wait(t, id)
	p := openPage(t, srv)
	p.waitCard(id)
	field := func(path string) string { return fmt.Sprintf(`%s [name=%q]`, card(id), path) }
	fieldError := func(path string) string {
		return eval[string](p, fmt.Sprintf(`document.querySelector(%s).textContent`, js(fmt.Sprintf(`%s .field[data-path=%q] .field-error`, card(id), path))))
	}
	if got := eval[string](p, fmt.Sprintf(`document.querySelector(%s).value`, js(field("/start")))); got != "2026-06-01" {
		t.Errorf("start date = %q, want the schema default 2026-06-01", got)
	}
	for path, want := range map[string]string{"/start": "date", "/when": "datetime-local", "/email": "email", "/site": "url", "/count": "number", "/plan": "select-one"} {
		if got := eval[string](p, fmt.Sprintf(`document.querySelector(%s).type`, js(field(path)))); got != want {
			t.Errorf("%s is an input of type %q, want %q", path, got, want)
		}
	}

	// Nothing filled in: the page refuses and says where.
	p.do(chromedp.Click(chromedp.CSS(card(id) + ` button[type="submit"]`)))
	p.waitCardText(id, "Some fields need attention.")
	for _, path := range []string{"/name", "/email", "/count", "/address/city"} {
		if got := fieldError(path); got == "" {
			t.Errorf("no error shown at %s", path)
		}
	}
	if got := eval[string](p, `document.activeElement.name`); got != "/name" {
		t.Errorf("focus on %q after a refused submit, want the first invalid field /name", got)
	}

	p.do(
		chromedp.SendKeys(chromedp.CSS(field("/name")), "Ada Lovelace"),
		chromedp.SendKeys(chromedp.CSS(field("/email")), "ada"),
		chromedp.SendKeys(chromedp.CSS(field("/count")), "3"),
		chromedp.SendKeys(chromedp.CSS(field("/plan")), "te"),
		chromedp.Click(chromedp.CSS(field("/newsletter"))),
		chromedp.Click(chromedp.CSS(field("/tags#0"))),
		chromedp.Click(chromedp.CSS(field("/tags#2"))),
		chromedp.SendKeys(chromedp.CSS(field("/address/city")), "Paris"),
		chromedp.SendKeys(chromedp.CSS(field("/address/zip")), "7500"),
		chromedp.SendKeys(chromedp.CSS(field("/ip")), "999.1.1.1"),
		chromedp.SendKeys(chromedp.CSS(field("/site")), "https://example.com/ada"),
		chromedp.Click(chromedp.CSS(card(id)+` button[type="submit"]`)),
	)
	p.waitJS(fmt.Sprintf(`document.querySelector(%s).textContent !== ""`, js(fmt.Sprintf(`%s .field[data-path="/address/zip"] .field-error`, card(id)))))
	if got := fieldError("/email"); got == "" {
		t.Error(`no error at /email for "ada"`)
	}
	for _, path := range []string{"/name", "/count", "/plan", "/address/city"} {
		if got := fieldError(path); got != "" {
			t.Errorf("error %q at %s, which is valid now", got, path)
		}
	}

	// Fixed in the page; the server alone knows ipv4 and says so at the field.
	p.do(
		chromedp.SendKeys(chromedp.CSS(field("/email")), "@example.com"),
		chromedp.SendKeys(chromedp.CSS(field("/address/zip")), "1"),
		chromedp.Click(chromedp.CSS(card(id)+` button[type="submit"]`)),
	)
	p.waitJS(fmt.Sprintf(`document.querySelector(%s).textContent.includes("ipv4")`, js(fmt.Sprintf(`%s .field[data-path="/ip"] .field-error`, card(id)))))
	if got := eval[string](p, fmt.Sprintf(`document.querySelector(%s).getAttribute("aria-invalid")`, js(field("/ip")))); got != "true" {
		t.Errorf("the field the server refused has aria-invalid=%q, want true", got)
	}

	p.do(
		chromedp.Click(chromedp.CSS(field("/ip"))),
		chromedp.KeyEvent(strings.Repeat(kb.Backspace, len("999.1.1.1"))),
		chromedp.SendKeys(chromedp.CSS(field("/ip")), "10.0.0.1"),
		chromedp.Focus(chromedp.CSS(field("/name"))),
		ctrlEnter(),
	)
	assertValue(t, awaitResult(t, wait), `{
		"name": "Ada Lovelace", "email": "ada@example.com", "count": 3, "plan": "team",
		"start": "2026-06-01", "newsletter": true, "tags": ["alpha", "gamma"],
		"address": {"city": "Paris", "zip": "75001"}, "ip": "10.0.0.1",
		"when": "2026-06-01T09:30:00.000Z", "site": "https://example.com/ada"
	}`)
}
