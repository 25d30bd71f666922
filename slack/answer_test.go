package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/slackfake"
)

// Slack users of the tests: alice is a hitl user (same email), bob is not.
const (
	slackAlice = "UALICE01"
	slackBob   = "UBOB0001"
)

func newSignedRequest(body []byte, contentType string, ts time.Time, secret string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "/slack/test", bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	sts := strconv.FormatInt(ts.Unix(), 10)
	req.Header.Set("X-Slack-Request-Timestamp", sts)
	req.Header.Set("X-Slack-Signature", Sign(body, secret, sts))
	return req
}

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

// withUsers makes alice a hitl user in group ops, known to Slack by the
// same email; bob has no hitl account.
func withUsers(t *testing.T, h *harness) {
	t.Helper()
	err := h.store.CreateUser(context.Background(), &hitl.User{Name: "alice", Email: "Alice@Example.com", Groups: []string{"ops"}, PasswordHash: "x"})
	if err != nil {
		t.Fatal(err)
	}
	h.fake.SetUser(slackAlice, "alice@example.com")
	h.fake.SetUser(slackBob, "bob@elsewhere.example")
}

// interact posts an interactivity payload, signed, and returns the status
// and body.
func (h *harness) interact(payload any) (int, string) {
	h.t.Helper()
	js, err := json.Marshal(payload)
	if err != nil {
		h.t.Fatal(err)
	}
	body := []byte("payload=" + url.QueryEscape(string(js)))
	return h.post(h.s.InteractivityHandler(), "application/x-www-form-urlencoded", body, time.Now(), testSecret, nil)
}

// click is a block_actions payload: user clicks the element with the
// action ID in the message posted by call.
func click(user string, call slackfake.Call, actionID string, extra map[string]any) map[string]any {
	action := map[string]any{"action_id": actionID, "block_id": "hitl_actions", "type": "button", "value": actionID, "action_ts": "1700000002.000001"}
	for k, v := range extra {
		action[k] = v
	}
	return map[string]any{
		"type": "block_actions", "trigger_id": "TRIGGER1",
		"user":      map[string]any{"id": user},
		"channel":   map[string]any{"id": call.Form.Get("channel")},
		"container": map[string]any{"type": "message", "channel_id": call.Form.Get("channel")},
		"actions":   []any{action},
	}
}

// options returns the option values (tokens) of the select or checkboxes
// of a posted message, by label.
func options(t *testing.T, c slackfake.Call) (element string, values map[string]string) {
	t.Helper()
	var blocks []map[string]any
	if err := json.Unmarshal([]byte(c.Blocks()), &blocks); err != nil {
		t.Fatal(err)
	}
	values = map[string]string{}
	for _, b := range blocks {
		els, _ := b["elements"].([]any)
		for _, e := range els {
			el, _ := e.(map[string]any)
			opts, ok := el["options"].([]any)
			if !ok {
				continue
			}
			element, _ = el["action_id"].(string)
			for _, o := range opts {
				om := o.(map[string]any)
				text := om["text"].(map[string]any)["text"].(string)
				values[text] = om["value"].(string)
			}
		}
	}
	return element, values
}

func wantResult(t *testing.T, in *hitl.Interaction, value, by string) {
	t.Helper()
	if in.Status != hitl.StatusAnswered || in.Result == nil {
		t.Fatalf("interaction: got status %s, result %+v; want answered", in.Status, in.Result)
	}
	if got := string(in.Result.Value); got != value {
		t.Errorf("value: got %s, want %s", got, value)
	}
	if in.Result.RespondedBy != by || in.Result.Channel != hitl.ChannelSlack {
		t.Errorf("answered by %q via %q, want %q via slack", in.Result.RespondedBy, in.Result.Channel, by)
	}
}

// wantNoActions fails unless a message's blocks hold no element to
// answer with.
func wantNoActions(t *testing.T, c slackfake.Call) {
	t.Helper()
	if strings.Contains(c.Blocks(), `"type":"actions"`) || strings.Contains(c.Blocks(), `"action_id"`) {
		t.Errorf("updated message still has elements to answer with: %s", c.Blocks())
	}
}

func TestApprovalButton(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	withUsers(t, h)
	in := h.ask(hitl.CreateRequest{Type: hitl.TypeApproval, Options: hitl.OptionList{{Key: "ship", Label: "Ship it"}, {Key: "hold", Label: "Hold"}},
		Context: "See [the diff](https://example.com/d?a=1&b=2)", SourceAgent: "deploy-bot"})
	post, row := h.waitPosted(in)

	if row.State != hitl.SlackPosted || row.ChannelID != testChannel || row.TS == "" {
		t.Fatalf("row after posting: got %s in %q at %q, want posted in %s with a ts", row.State, row.ChannelID, row.TS, testChannel)
	}
	for _, want := range []string{
		`"type":"header"`, "Approval needed", "Deploy to *production*?", "<https://example.com/d?a=1&amp;b=2|the diff>",
		"<!date^" + strconv.FormatInt(in.Deadline.Unix(), 10), "deploy-bot", "https://hitl.example.com/?interaction=" + in.ID,
		"hitl request `" + in.ID + "`", `"style":"primary"`, `"style":"danger"`,
	} {
		if !strings.Contains(post.Blocks(), want) {
			t.Errorf("posted blocks lack %q:\n%s", want, post.Blocks())
		}
	}
	ids := actionIDs(t, post)
	ship, hold := ids["Ship it"], ids["Hold"]
	if ship == "" || hold == "" || ship == hold {
		t.Fatalf("buttons: got %v, want distinct tokens for Ship it and Hold", ids)
	}
	for _, id := range []string{ship, hold} {
		if strings.Contains(id, "ship") || strings.Contains(id, "hold") || strings.Contains(id, "Ship") {
			t.Errorf("action_id %q gives the option away; it must be an opaque token", id)
		}
	}
	if ev := h.waitEvent(hitl.EventNotified, in.ID); ev.Channel != hitl.ChannelSlack {
		t.Errorf("notified event: got channel %q, want slack", ev.Channel)
	}

	code, _ := h.interact(click(slackAlice, post, ship, nil))
	if code != http.StatusOK {
		t.Fatalf("interactivity: got status %d, want 200", code)
	}
	wantResult(t, h.waitEnded(in.ID), "true", "alice")

	upd := h.waitUpdated(in)
	if upd.Form.Get("ts") != row.TS || upd.Form.Get("channel") != testChannel {
		t.Errorf("chat.update of %s/%s, want the posted message %s/%s", upd.Form.Get("channel"), upd.Form.Get("ts"), testChannel, row.TS)
	}
	if !strings.Contains(upd.Blocks(), "✅ Approved by *alice* via slack at <!date^") {
		t.Errorf("updated message does not say who approved:\n%s", upd.Blocks())
	}
	wantNoActions(t, upd)
	h.waitRow(in.ID, hitl.SlackClosed)
}

// waitRow waits until the row of id is in state, looking again after
// each of the worker's steps (rows move only there).
func (h *harness) waitRow(id string, state hitl.SlackState) {
	h.t.Helper()
	deadline := time.NewTimer(slackfake.Bound)
	defer deadline.Stop()
	for {
		ch := h.stepSignal()
		if got := h.row(id).State; got == state {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			h.t.Fatalf("row of %s: got %s after %v, want %s", id, h.row(id).State, slackfake.Bound, state)
		}
	}
}

func TestSingleChoiceSelect(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	withUsers(t, h)
	labels := []string{"Alpha", "Beta", "Gamma", "Delta", "Epsilon", "Zeta", "Eta"}
	var opts hitl.OptionList
	for _, l := range labels {
		opts = append(opts, hitl.Option{Key: strings.ToLower(l) + "_key", Label: l})
	}
	in := h.ask(hitl.CreateRequest{Type: hitl.TypeSingleChoice, Options: opts})
	post, _ := h.waitPosted(in)
	if !strings.Contains(post.Blocks(), `"type":"static_select"`) {
		t.Fatalf("7 options: want a static select, got:\n%s", post.Blocks())
	}
	sel, values := options(t, post)
	if len(values) != len(labels) || values["Gamma"] == "" {
		t.Fatalf("select options: got %v", values)
	}
	code, _ := h.interact(click(slackBob, post, sel, map[string]any{
		"type": "static_select", "selected_option": map[string]any{"value": values["Gamma"], "text": map[string]any{"type": "plain_text", "text": "Gamma"}},
	}))
	if code != http.StatusOK {
		t.Fatalf("interactivity: got %d", code)
	}
	wantResult(t, h.waitEnded(in.ID), `"gamma_key"`, "slack:"+slackBob)
	upd := h.waitUpdated(in)
	if !strings.Contains(upd.Blocks(), "✅ Answered by <@"+slackBob+"> via slack at") || !strings.Contains(upd.Blocks(), "*Gamma*") {
		t.Errorf("updated message does not give the choice:\n%s", upd.Blocks())
	}
	wantNoActions(t, upd)
}

func TestSingleChoiceButtons(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	in := h.ask(hitl.CreateRequest{Type: hitl.TypeSingleChoice, Options: hitl.OptionList{{Key: "eu", Label: "Europe"}, {Key: "us", Label: "America"}}})
	post, _ := h.waitPosted(in)
	ids := actionIDs(t, post)
	if ids["Europe"] == "" || ids["America"] == "" {
		t.Fatalf("buttons: got %v, want one per option", ids)
	}
	h.interact(click(slackBob, post, ids["America"], nil))
	wantResult(t, h.waitEnded(in.ID), `"us"`, "slack:"+slackBob)
}

func TestMultiChoiceCheckboxes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	withUsers(t, h)
	in := h.ask(hitl.CreateRequest{Type: hitl.TypeMultiChoice, Options: hitl.OptionList{{Key: "a", Label: "Apples"}, {Key: "b", Label: "Bananas"}, {Key: "c", Label: "Cherries"}}})
	post, _ := h.waitPosted(in)
	box, values := options(t, post)
	submit := actionIDs(t, post)["Submit"]
	if !strings.Contains(post.Blocks(), `"type":"checkboxes"`) || submit == "" {
		t.Fatalf("want checkboxes and a Submit button, got:\n%s", post.Blocks())
	}
	// Ticking a box answers nothing.
	h.interact(click(slackAlice, post, box, map[string]any{"type": "checkboxes", "selected_options": []any{map[string]any{"value": values["Apples"]}}}))
	payload := click(slackAlice, post, submit, nil)
	payload["state"] = map[string]any{"values": map[string]any{"hitl_actions": map[string]any{
		box: map[string]any{"type": "checkboxes", "selected_options": []any{
			map[string]any{"value": values["Apples"]}, map[string]any{"value": values["Cherries"]},
		}},
	}}}
	h.interact(payload)
	wantResult(t, h.waitEnded(in.ID), `["a","c"]`, "alice")
	upd := h.waitUpdated(in)
	if !strings.Contains(upd.Blocks(), "*Apples*, *Cherries*") {
		t.Errorf("updated message does not list the choices:\n%s", upd.Blocks())
	}
	wantNoActions(t, upd)
}

// openModal clicks the message's primary button and returns the modal
// views.open was asked for.
func (h *harness) openModal(post slackfake.Call, button string) map[string]any {
	h.t.Helper()
	id := actionIDs(h.t, post)[button]
	if id == "" {
		h.t.Fatalf("no %q button in:\n%s", button, post.Blocks())
	}
	n := len(h.fake.Calls("views.open"))
	h.interact(click(slackAlice, post, id, nil))
	call := h.fake.WaitFor("views.open", n+1, nil)[n]
	if call.Body["trigger_id"] != "TRIGGER1" {
		h.t.Errorf("views.open trigger: got %v, want the click's", call.Body["trigger_id"])
	}
	view, _ := call.Body["view"].(map[string]any)
	return view
}

// submit posts a view_submission of view with the given state values and
// returns the response body.
func (h *harness) submit(view map[string]any, values map[string]any) string {
	h.t.Helper()
	code, body := h.interact(map[string]any{
		"type": "view_submission",
		"user": map[string]any{"id": slackAlice},
		"view": map[string]any{"id": "V0001", "callback_id": view["callback_id"], "private_metadata": view["private_metadata"],
			"state": map[string]any{"values": values}},
	})
	if code != http.StatusOK {
		h.t.Fatalf("view_submission: got status %d", code)
	}
	return body
}

func TestFreeTextModal(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	withUsers(t, h)
	in := h.ask(hitl.CreateRequest{Question: "Enter the 6-digit code"})
	post, _ := h.waitPosted(in)
	view := h.openModal(post, "Answer")
	if view["type"] != "modal" || view["private_metadata"] == "" {
		t.Fatalf("modal: got %v", view)
	}
	body := h.submit(view, map[string]any{answerBlock: map[string]any{valueAction: map[string]any{"type": "plain_text_input", "value": "582491"}}})
	if body != "" {
		t.Errorf("view_submission response: got %q, want none (the modal closes)", body)
	}
	wantResult(t, h.waitEnded(in.ID), `"582491"`, "alice")
	upd := h.waitUpdated(in)
	if strings.Contains(upd.Blocks(), "582491") {
		t.Errorf("the updated message repeats a free-text answer (it may be a secret):\n%s", upd.Blocks())
	}
	if !strings.Contains(upd.Blocks(), "✅ Answered by *alice* via slack") {
		t.Errorf("updated message: %s", upd.Blocks())
	}
}

const testSchema = `{"type":"object","properties":{
	"name":{"type":"string","title":"Name"},
	"count":{"type":"integer","minimum":1,"maximum":10},
	"urgent":{"type":"boolean"},
	"color":{"enum":["red","green",3]},
	"due":{"type":"string","format":"date"}
},"required":["name","count"]}`

func TestFormModal(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	withUsers(t, h)
	in := h.ask(hitl.CreateRequest{Type: hitl.TypeForm, Question: "Release details", FormSchema: json.RawMessage(testSchema)})
	post, _ := h.waitPosted(in)
	view := h.openModal(post, "Fill in")

	blocks, _ := view["blocks"].([]any)
	var kinds []string
	for _, b := range blocks[1:] {
		el := b.(map[string]any)["element"].(map[string]any)
		kinds = append(kinds, el["type"].(string))
	}
	want := []string{"plain_text_input", "number_input", "checkboxes", "static_select", "datepicker"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Fatalf("modal inputs, in the schema's order (-want +got):\n%s", diff)
	}

	v := func(typ string, kv ...any) map[string]any {
		m := map[string]any{"type": typ}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return map[string]any{valueAction: m}
	}
	// Not a whole number: the modal stays open with the error on that input.
	body := h.submit(view, map[string]any{"f0": v("plain_text_input", "value", "v1.2"), "f1": v("number_input", "value", "1.5")})
	if !strings.Contains(body, `"response_action":"errors"`) || !strings.Contains(body, `"f1":"Enter a whole number"`) {
		t.Fatalf("invalid submission: got %s, want errors on f1", body)
	}
	// Outside the schema's range: the engine refuses it, shown in the modal.
	body = h.submit(view, map[string]any{"f0": v("plain_text_input", "value", "v1.2"), "f1": v("number_input", "value", "11")})
	if !strings.Contains(body, `"response_action":"errors"`) || !strings.Contains(body, "Not accepted") {
		t.Fatalf("out-of-range submission: got %s, want errors", body)
	}
	if got := h.get(in.ID).Status; got != hitl.StatusPending {
		t.Fatalf("after refused submissions: status %s, want pending", got)
	}
	body = h.submit(view, map[string]any{
		"f0": v("plain_text_input", "value", "v1.2"),
		"f1": v("number_input", "value", "3"),
		"f2": v("checkboxes", "selected_options", []any{map[string]any{"value": "true"}}),
		"f3": v("static_select", "selected_option", map[string]any{"value": "2"}),
		"f4": v("datepicker", "selected_date", "2030-05-06"),
	})
	if body != "" {
		t.Fatalf("valid submission: got response %s, want none", body)
	}
	wantResult(t, h.waitEnded(in.ID), `{"color":3,"count":3,"due":"2030-05-06","name":"v1.2","urgent":true}`, "alice")
}

func TestFormNotMappableLinksToInbox(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	in := h.ask(hitl.CreateRequest{Type: hitl.TypeForm, FormSchema: json.RawMessage(`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}}}}`)})
	post, _ := h.waitPosted(in)
	ids := actionIDs(t, post)
	if _, ok := ids["Fill in"]; ok {
		t.Errorf("a form with an array property got a modal button")
	}
	if ids["Open in hitl"] == "" || !strings.Contains(post.Blocks(), "answered in the web inbox") {
		t.Errorf("want the link to the web inbox, got:\n%s", post.Blocks())
	}
}

// reply is a thread reply event from user.
func reply(eventID, user, channel, threadTS, text string) []byte {
	b, _ := json.Marshal(map[string]any{
		"type": "event_callback", "event_id": eventID, "team_id": "T0001",
		"event": map[string]any{"type": "message", "user": user, "channel": channel, "text": text,
			"ts": "1700000099.000001", "thread_ts": threadTS},
	})
	return b
}

func TestThreadReply(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	withUsers(t, h)
	in := h.ask(hitl.CreateRequest{Type: hitl.TypeApproval})
	_, row := h.waitPosted(in)
	events := h.s.EventsHandler()
	// A bot's message and a reply in another thread answer nothing.
	bot, _ := json.Marshal(map[string]any{"type": "event_callback", "event_id": "Ev0",
		"event": map[string]any{"type": "message", "bot_id": "B1", "channel": testChannel, "text": "yes", "ts": "1.1", "thread_ts": row.TS}})
	if code, _ := h.post(events, "application/json", bot, time.Now(), testSecret, nil); code != http.StatusOK {
		t.Fatalf("events: got %d", code)
	}
	h.post(events, "application/json", reply("Ev1", slackAlice, testChannel, "1699999999.000001", "yes"), time.Now(), testSecret, nil)
	if code, _ := h.post(events, "application/json", reply("Ev2", slackAlice, testChannel, row.TS, "<@UBOT0001> Approve "), time.Now(), testSecret, nil); code != http.StatusOK {
		t.Fatalf("events: got %d", code)
	}
	wantResult(t, h.waitEnded(in.ID), "true", "alice")
	h.waitUpdated(in)

	// A later reply is told, in the thread, that it is too late.
	h.post(events, "application/json", reply("Ev3", slackBob, testChannel, row.TS, "no"), time.Now(), testSecret, nil)
	eph := h.fake.WaitFor("chat.postEphemeral", 1, nil)[0]
	if eph.Form.Get("user") != slackBob || eph.Form.Get("thread_ts") != row.TS || !strings.Contains(eph.Form.Get("text"), "Already answered: ✅ Approved by *alice*") {
		t.Errorf("late reply: got ephemeral %v", eph.Form)
	}
}

func TestWebAnswerUpdatesMessage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	in := h.ask(hitl.CreateRequest{Type: hitl.TypeApproval})
	post, _ := h.waitPosted(in)
	web := hitl.WithCaller(context.Background(), hitl.Caller{Name: "bob", Channel: hitl.ChannelWeb, Role: hitl.RoleResponder})
	if _, err := h.b.Respond(web, in.ID, json.RawMessage(`false`)); err != nil {
		t.Fatalf("respond on the web: %v", err)
	}
	upd := h.waitUpdated(in)
	if !strings.Contains(upd.Blocks(), "❌ Rejected by *bob* via web at <!date^") {
		t.Errorf("updated message: %s", upd.Blocks())
	}
	wantNoActions(t, upd)

	// A late click is told who answered, and changes nothing.
	h.interact(click(slackBob, post, actionIDs(t, post)["Approve"], nil))
	eph := h.fake.WaitFor("chat.postEphemeral", 1, nil)[0]
	if eph.Form.Get("user") != slackBob || !strings.Contains(eph.Form.Get("text"), "Already answered: ❌ Rejected by *bob* via web") {
		t.Errorf("late click: got ephemeral %v", eph.Form)
	}
	if got := h.get(in.ID); string(got.Result.Value) != "false" || got.Result.RespondedBy != "bob" {
		t.Errorf("after a late click: got %s by %s, want false by bob", got.Result.Value, got.Result.RespondedBy)
	}
}

func TestCancelAndExpiryUpdateMessage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	cancelled := h.ask(hitl.CreateRequest{Question: "Cancel me"})
	expiring := h.ask(hitl.CreateRequest{Question: "Expire me", Timeout: 1})
	h.waitPosted(cancelled)
	h.waitPosted(expiring)
	agent := hitl.WithCaller(context.Background(), hitl.Caller{Name: "agent", Channel: hitl.ChannelAPI, Role: hitl.RoleAgent})
	if _, err := h.b.Cancel(agent, cancelled.ID, ""); err != nil {
		t.Fatal(err)
	}
	if upd := h.waitUpdated(cancelled); !strings.Contains(upd.Blocks(), "🚫 Cancelled by the agent") {
		t.Errorf("cancelled: %s", upd.Blocks())
	}
	if upd := h.waitUpdated(expiring); !strings.Contains(upd.Blocks(), "⌛ Expired at <!date^") {
		t.Errorf("expired: %s", upd.Blocks())
	}
}

func TestTargetedInteraction(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	withUsers(t, h)
	in := h.ask(hitl.CreateRequest{Type: hitl.TypeApproval, Targets: &hitl.Targets{Groups: []string{"ops"}}})
	post, _ := h.waitPosted(in)
	approve := actionIDs(t, post)["Approve"]
	h.interact(click(slackBob, post, approve, nil))
	eph := h.fake.WaitFor("chat.postEphemeral", 1, nil)[0]
	if eph.Form.Get("user") != slackBob || !strings.Contains(eph.Form.Get("text"), "meant for someone else") {
		t.Errorf("unmapped user on a targeted interaction: got ephemeral %v", eph.Form)
	}
	if got := h.get(in.ID).Status; got != hitl.StatusPending {
		t.Fatalf("after a refused click: %s, want pending", got)
	}
	h.interact(click(slackAlice, post, approve, nil)) // alice is in ops
	wantResult(t, h.waitEnded(in.ID), "true", "alice")
}

func TestUnmappedUsersNone(t *testing.T) {
	t.Parallel()
	cfg := httpConfig()
	cfg.UnmappedUsers = UnmappedNone
	h := newHarness(t, harnessOptions{config: cfg})
	withUsers(t, h)
	in := h.ask(hitl.CreateRequest{Type: hitl.TypeApproval})
	post, _ := h.waitPosted(in)
	h.interact(click(slackBob, post, actionIDs(t, post)["Approve"], nil))
	eph := h.fake.WaitFor("chat.postEphemeral", 1, nil)[0]
	if !strings.Contains(eph.Form.Get("text"), "not linked to a hitl user") {
		t.Errorf("unmapped user when no one unmapped may answer: got ephemeral %v", eph.Form)
	}
	if got := h.get(in.ID).Status; got != hitl.StatusPending {
		t.Fatalf("status %s, want pending", got)
	}
}

func TestNotifyOverrides(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	off := h.ask(hitl.CreateRequest{Question: "not on Slack", Notify: &hitl.Notify{Slack: &hitl.SlackNotify{Off: true}}})
	elsewhere := h.ask(hitl.CreateRequest{Question: "elsewhere", Notify: &hitl.Notify{Slack: &hitl.SlackNotify{ChannelID: "C0OTHER01"}}})
	post, row := h.waitPosted(elsewhere)
	if post.Form.Get("channel") != "C0OTHER01" || row.ChannelID != "C0OTHER01" {
		t.Errorf("posted to %q (row %q), want the interaction's channel C0OTHER01", post.Form.Get("channel"), row.ChannelID)
	}
	if got := h.row(off.ID).State; got != hitl.SlackSkipped {
		t.Errorf("row of an interaction with Slack off: got %s, want skipped", got)
	}
	for _, c := range h.fake.Calls("chat.postMessage") {
		if strings.Contains(c.Blocks(), off.ID) {
			t.Errorf("an interaction with Slack off was posted")
		}
	}
}

func TestMentionAndPostFailure(t *testing.T) {
	t.Parallel()
	cfg := httpConfig()
	cfg.Mention = MentionHere
	fake := slackfake.NewUnstarted(t, nil)
	fake.FailPosts("not_in_channel")
	h := newHarness(t, harnessOptions{config: cfg, fake: fake})
	in := h.ask(hitl.CreateRequest{})
	// A permanent error: given up at once, not retried.
	fake.WaitFor("chat.postMessage", 1, nil)
	h.waitRow(in.ID, hitl.SlackFailed)
	fake.FailPosts("")
	in2 := h.ask(hitl.CreateRequest{})
	post, _ := h.waitPosted(in2)
	if !strings.HasPrefix(post.Form.Get("text"), "<!here> ") || !strings.Contains(post.Blocks(), "<!here> Deploy") {
		t.Errorf("mention here: text %q, blocks %s", post.Form.Get("text"), post.Blocks())
	}
}
