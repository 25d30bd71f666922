package slack

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

// input is a submitted input's state: its type and what it holds.
func input(typ string, kv ...any) map[string]any {
	m := map[string]any{"type": typ}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return map[string]any{valueAction: m}
}

func text(value string) map[string]any { return input("plain_text_input", "value", value) }

func selected(typ, value string) map[string]any {
	return input(typ, "selected_option", map[string]any{"value": value})
}

// modalInputs returns a modal's input blocks by block ID.
func modalInputs(t *testing.T, view map[string]any) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	blocks, _ := view["blocks"].([]any)
	for _, b := range blocks {
		bm := b.(map[string]any)
		if bm["type"] == "input" {
			out[bm["block_id"].(string)] = bm
		}
	}
	return out
}

// wantModalError fails unless a submission's response keeps the modal
// open with an error on block that holds want.
func wantModalError(t *testing.T, body, block, want string) {
	t.Helper()
	var r struct {
		Action string            `json:"response_action"`
		Errors map[string]string `json:"errors"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.Action != "errors" || !strings.Contains(r.Errors[block], want) {
		t.Errorf("submission response: got %s; want errors with %q on %s", body, want, block)
	}
}

func TestActionApproveButton(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	withUsers(t, h)
	in := h.askAction("Bash", `{"command":"make deploy"}`, nil)
	post, _ := h.waitPosted(in)
	if code, _ := h.interact(click(slackAlice, post, actionIDs(t, post)["Approve"], nil)); code != http.StatusOK {
		t.Fatalf("interactivity: got %d", code)
	}
	wantResult(t, h.waitEnded(in.ID), `{"decision":"approve"}`, "alice")
	upd := h.waitUpdated(in)
	if !strings.Contains(upd.Blocks(), "✅ Approved by *alice* via slack at <!date^") {
		t.Errorf("updated message:\n%s", upd.Blocks())
	}
	if got := code(t, upd.Blocks()); !cmp.Equal(got, []string{"make deploy"}) {
		t.Errorf("the updated message should still show what ran: code %q", got)
	}
	if got := upd.Form.Get("text"); got != "Action to review: make deploy — approved" {
		t.Errorf("updated text: %q", got)
	}
	wantNoActions(t, upd)
}

func TestActionRejectModal(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	withUsers(t, h)
	in := h.askAction("Bash", `{"command":"terraform destroy"}`, func(r *hitl.CreateRequest) { r.RejectRequiresMessage = true })
	post, _ := h.waitPosted(in)
	view := h.openModal(post, "Reject")
	reason := modalInputs(t, view)[blockMessage]
	if reason == nil || reason["optional"] == true {
		t.Fatalf("reject modal: want a required reason input, got %v", view["blocks"])
	}
	if got := code(t, mustJSON(t, view["blocks"])); !cmp.Equal(got, []string{"terraform destroy"}) {
		t.Errorf("reject modal shows %q, want the command", got)
	}
	// Blank (Slack lets white space through a required input): refused by the engine, shown in the modal.
	body := h.submit(view, map[string]any{blockMessage: text("   ")})
	wantModalError(t, body, blockMessage, "Not accepted: a reason is required")
	if got := h.get(in.ID).Status; got != hitl.StatusPending {
		t.Fatalf("after a refused rejection: %s", got)
	}
	if body := h.submit(view, map[string]any{blockMessage: text(" not on a Friday\n")}); body != "" {
		t.Fatalf("valid rejection: response %s, want none", body)
	}
	wantResult(t, h.waitEnded(in.ID), `{"decision":"reject","message":"not on a Friday"}`, "alice")
	upd := h.waitUpdated(in)
	if !strings.Contains(upd.Blocks(), "❌ Rejected by *alice* via slack at ") || !strings.Contains(upd.Blocks(), "UTC>: not on a Friday") {
		t.Errorf("updated message does not give the reason:\n%s", upd.Blocks())
	}
	wantNoActions(t, upd)
}

func TestActionRespondModal(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	withUsers(t, h)
	in := h.askAction("Bash", `{"command":"terraform apply"}`, nil)
	post, _ := h.waitPosted(in)
	view := h.openModal(post, "Respond")
	if modalInputs(t, view)[blockMessage] == nil {
		t.Fatalf("respond modal: no message input in %v", view["blocks"])
	}
	if body := h.submit(view, map[string]any{blockMessage: text("Run terraform plan first and show me")}); body != "" {
		t.Fatalf("respond: response %s", body)
	}
	wantResult(t, h.waitEnded(in.ID), `{"decision":"respond","message":"Run terraform plan first and show me"}`, "alice")
	upd := h.waitUpdated(in)
	if !strings.Contains(upd.Blocks(), "💬 Answered instead by *alice* via slack at ") || !strings.Contains(upd.Blocks(), ": Run terraform plan first and show me") {
		t.Errorf("updated message does not give the reply:\n%s", upd.Blocks())
	}
}

func TestActionEditFields(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	withUsers(t, h)
	in := h.askAction("Bash", `{"command":"terraform apply -auto-approve","description":"apply","timeout":300}`, func(r *hitl.CreateRequest) {
		r.ArgsSchema = json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","title":"Command"},"timeout":{"type":"integer","maximum":600}},"required":["command"]}`)
	})
	post, _ := h.waitPosted(in)
	view := h.openModal(post, "Edit")
	inputs := modalInputs(t, view)
	cmdInput, _ := inputs["f0"]["element"].(map[string]any)
	timeoutInput, _ := inputs["f1"]["element"].(map[string]any)
	if cmdInput["initial_value"] != "terraform apply -auto-approve" || timeoutInput["type"] != "number_input" || timeoutInput["initial_value"] != "300" {
		t.Fatalf("edit modal: want the schema's fields with the proposed values, got %v", view["blocks"])
	}
	if !strings.Contains(mustJSON(t, view["blocks"]), "Kept as proposed: `description`") {
		t.Errorf("edit modal does not say which arguments it keeps: %v", view["blocks"])
	}
	body := h.submit(view, map[string]any{"f0": text("terraform plan"), "f1": input("number_input", "value", "1.5")})
	wantModalError(t, body, "f1", "Enter a whole number")
	body = h.submit(view, map[string]any{"f0": text("terraform plan"), "f1": input("number_input", "value", "900")})
	wantModalError(t, body, "f0", "Not accepted")
	if body := h.submit(view, map[string]any{"f0": text("terraform plan"), "f1": input("number_input", "value", "300")}); body != "" {
		t.Fatalf("valid edit: response %s", body)
	}
	got := h.waitEnded(in.ID)
	wantResult(t, got, `{"decision":"edit","args":{"command":"terraform plan","description":"apply","timeout":300}}`, "alice")
	if d := string(got.Result.ArgsDiff); d != `[{"op":"replace","path":"/command","value":"terraform plan"}]` {
		t.Errorf("args_diff: %s", d)
	}
	upd := h.waitUpdated(in)
	if !strings.Contains(upd.Blocks(), "✏️ Edited and approved by *alice* via slack at ") || !strings.Contains(upd.Blocks(), "UTC>: command → `terraform plan`") {
		t.Errorf("updated message does not say what changed:\n%s", upd.Blocks())
	}
	want := []string{"terraform apply -auto-approve", "command\n-terraform apply -auto-approve\n+terraform plan"}
	if diff := cmp.Diff(want, code(t, upd.Blocks())); diff != "" {
		t.Errorf("updated message: the proposal and the edit's diff (-want +got):\n%s", diff)
	}
}

func TestActionEditJSON(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	withUsers(t, h)
	// No schema: the arguments as JSON, checked to be an object.
	in := h.askAction("deploy", `{"service":"api","replicas":3}`, nil)
	post, _ := h.waitPosted(in)
	view := h.openModal(post, "Edit")
	el, _ := modalInputs(t, view)[blockArgs]["element"].(map[string]any)
	if el["initial_value"] != "{\n  \"service\": \"api\",\n  \"replicas\": 3\n}" || el["multiline"] != true {
		t.Fatalf("JSON editor: got %v", el)
	}
	wantModalError(t, h.submit(view, map[string]any{blockArgs: text(`{"service": "api",`)}), blockArgs, "Not valid JSON at character")
	wantModalError(t, h.submit(view, map[string]any{blockArgs: text(`["api"]`)}), blockArgs, "must be a JSON object")
	if body := h.submit(view, map[string]any{blockArgs: text(`{"service":"api","replicas":1}`)}); body != "" {
		t.Fatalf("valid edit: %s", body)
	}
	wantResult(t, h.waitEnded(in.ID), `{"decision":"edit","args":{"replicas":1,"service":"api"}}`, "alice")
	if upd := h.waitUpdated(in); !strings.Contains(upd.Blocks(), ": replicas → `1`") {
		t.Errorf("updated message:\n%s", upd.Blocks())
	}

	// A schema Slack has no inputs for: JSON too, and what it refuses is shown.
	in = h.askAction("tag", `{"name":"v1","labels":["a"]}`, func(r *hitl.CreateRequest) {
		r.ArgsSchema = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","pattern":"^v[0-9]+$"},"labels":{"type":"array","items":{"type":"string"}}},"required":["name"]}`)
	})
	post, _ = h.waitPosted(in)
	view = h.openModal(post, "Edit")
	wantModalError(t, h.submit(view, map[string]any{blockArgs: text(`{"name":"latest","labels":[]}`)}), blockArgs, "Not accepted")
	if got := h.get(in.ID).Status; got != hitl.StatusPending {
		t.Fatalf("after an invalid edit: %s", got)
	}
	if body := h.submit(view, map[string]any{blockArgs: text(`{"name":"v2","labels":["a"]}`)}); body != "" {
		t.Fatalf("valid edit: %s", body)
	}
	wantResult(t, h.waitEnded(in.ID), `{"decision":"edit","args":{"labels":["a"],"name":"v2"}}`, "alice")
}

func TestActionAlwaysAllow(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: httpConfig()})
	withUsers(t, h)
	in := h.askAction("Bash", `{"command":"git status -s"}`, nil)
	post, _ := h.waitPosted(in)
	view := h.openModal(post, "Always allow")
	inputs := modalInputs(t, view)
	radio, _ := inputs[blockScope]["element"].(map[string]any)
	pattern, _ := inputs[blockPattern]["element"].(map[string]any)
	expiry, _ := inputs[blockExpiry]["element"].(map[string]any)
	var values []string
	for _, o := range radio["options"].([]any) {
		values = append(values, o.(map[string]any)["value"].(string))
	}
	if !cmp.Equal(values, []string{scopePattern, scopeAny}) || radio["initial_option"].(map[string]any)["value"] != scopePattern {
		t.Errorf("scope: options %v, initial %v; want the prefix first, chosen", values, radio["initial_option"])
	}
	if pattern["initial_value"] != "git status" {
		t.Errorf("pattern: got %v, want the command's first two words", pattern["initial_value"])
	}
	if expiry["initial_option"].(map[string]any)["value"] != "0" {
		t.Errorf("expiry: initial %v, want never", expiry["initial_option"])
	}
	blocks := mustJSON(t, view["blocks"])
	if !strings.Contains(blocks, "calls of *Bash* from *claude-code*") {
		t.Errorf("the modal does not name the rule's agent and action: %s", blocks)
	}

	submit := func(p, ttl string) string {
		return h.submit(view, map[string]any{blockScope: selected("radio_buttons", scopePattern), blockPattern: text(p), blockExpiry: selected("static_select", ttl)})
	}
	wantModalError(t, submit("git push", "0"), blockPattern, "does not match this call")
	wantModalError(t, submit("git status; rm", "0"), blockPattern, "shell control syntax")
	if body := submit("git status", "86400"); body != "" {
		t.Fatalf("always allow: response %s", body)
	}
	answered := h.waitEnded(in.ID)
	wantResult(t, answered, `{"decision":"approve"}`, "alice")

	rules, _, err := h.store.Rules(context.Background(), hitl.RuleFilter{CreatedBy: "alice"})
	if err != nil || len(rules) != 1 {
		t.Fatalf("rules made by alice: %v, %v; want one", rules, err)
	}
	r := rules[0]
	if r.Effect != hitl.RuleAllow || r.SourceAgent != "claude-code" || r.ActionName != "Bash" || r.InteractionID != in.ID ||
		r.Match == nil || r.Match.Arg != "command" || r.Match.Prefix != "git status" {
		t.Errorf("rule: %+v, match %+v", r, r.Match)
	}
	if r.ExpiresAt == nil || r.ExpiresAt.Sub(r.CreatedAt) != 24*time.Hour {
		t.Errorf("rule expiry: %v after %v, want a day", r.ExpiresAt, r.CreatedAt)
	}
	upd := h.waitUpdated(in)
	if want := "🔁 From now on allowed without asking: `command` starting with `git status` (rule `" + r.ID + "`, until <!date^"; !strings.Contains(upd.Blocks(), want) {
		t.Errorf("updated message lacks %q:\n%s", want, upd.Blocks())
	}

	// The next identical call is decided by the rule, and never posted.
	next := h.askAction("Bash", `{"command":"git status -s"}`, nil)
	if next.Status != hitl.StatusAnswered || next.Result.Channel != hitl.ChannelRule || next.Result.RuleID != r.ID {
		t.Fatalf("the next identical call: status %s, result %+v; want answered by rule %s", next.Status, next.Result, r.ID)
	}
	other := h.askAction("Bash", `{"command":"git push"}`, nil)
	h.waitPosted(other)
	for _, c := range h.fake.Calls("chat.postMessage") {
		if strings.Contains(c.Blocks(), next.ID) {
			t.Errorf("an action a rule decided was posted")
		}
	}
	if _, err := h.store.SlackMessage(context.Background(), next.ID); !errors.Is(err, hitl.ErrNotFound) {
		t.Errorf("Slack row of an action a rule decided: %v, want none", err)
	}
	// Were it shown, its outcome names the rule.
	if m := h.s.endedMessage(context.Background(), h.get(next.ID)); !strings.Contains(mustJSON(t, m.blocks), "✅ Allowed by rule `"+r.ID+"`") {
		t.Errorf("outcome of an action a rule decided: %s", mustJSON(t, m.blocks))
	}
}

func TestRuleScopes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, args string
		want       []string // value: pattern or equals
		label      string
	}{
		{"Bash", `{"command":"git status -s"}`, []string{"pattern:git status", "any:"}, "Command prefix"},
		{"Bash", `{"command":"ls"}`, []string{"pattern:ls", "any:"}, "Command prefix"},
		{"Bash", `{"command":"git log | head"}`, []string{"eqcommand:\"git log | head\"", "any:"}, ""},
		{"Bash", `{"command":"git\tstatus -s"}`, []string{"pattern:git\tstatus", "any:"}, "Command prefix"},
		{"Write", `{"file_path":"/repo/src/a.go","content":""}`, []string{"pattern:/repo/src/**", "any:"}, "Path pattern"},
		{"Edit", `{"file_path":"main.go","old_string":"a","new_string":"b"}`, []string{"pattern:**", "any:"}, "Path pattern"},
		{"Write", `{"file_path":"./src/a.go","content":""}`, []string{"pattern:src/**", "any:"}, "Path pattern"},
		{"bash", `{"command":"ls"}`, []string{"any:", `eqcommand:"ls"`}, ""},
		{"Write", `{"file_path":"/repo/[x]/a.go","content":""}`, []string{`pattern:/repo/\[x\]/**`, "any:"}, "Path pattern"},
		{"Write", `{"file_path":"src/../etc/passwd","content":""}`, []string{`eqfile_path:"src/../etc/passwd"`, "any:"}, ""},
		{"send_email", `{"to":"ops@example.com","cc":["x"],"urgent":true}`, []string{"any:", `eqto:"ops@example.com"`, "equrgent:true"}, ""},
	} {
		in := &hitl.Interaction{SourceAgent: "a", Action: &hitl.Action{Name: c.name, Args: json.RawMessage(c.args)}}
		scopes, label := ruleScopes(in)
		var got []string
		for _, sc := range scopes {
			s := sc.value + ":"
			if sc.match != nil {
				s += sc.pattern() + string(sc.match.Equals)
				if !sc.match.Matches(in.Action.Args) {
					t.Errorf("%s %s: scope %s does not match the call", c.name, c.args, s)
				}
			}
			got = append(got, s)
		}
		if !cmp.Equal(got, c.want) || label != c.label {
			t.Errorf("%s %s: got %q (%q), want %q (%q)", c.name, c.args, got, label, c.want, c.label)
		}
	}
}

// TestEditForm: the Edit modal has fields only when each proposed value
// fits its input (Slack refuses an initial value its input cannot hold);
// else the JSON editor, or none when the JSON is too long for an input.
func TestEditForm(t *testing.T) {
	t.Parallel()
	const schema = `{"type":"object","properties":{"command":{"type":"string","maxLength":10},"timeout":{"type":"integer","minimum":1,"maximum":600},"mode":{"enum":["fast","safe"]}}}`
	for _, c := range []struct {
		args, schema string
		want         string // fields, json or none
	}{
		{`{"command":"ls","timeout":5,"mode":"safe"}`, schema, "fields"},
		{`{"command":"ls"}`, schema, "fields"},
		{`{"command":"ls -la /tmp"}`, schema, "json"},
		{`{"timeout":900}`, schema, "json"},
		{`{"timeout":"5"}`, schema, "json"},
		{`{"mode":"slow"}`, schema, "json"},
		{`{"command":"ls"}`, `{"type":"object","properties":{"command":{"type":"array"}}}`, "json"},
		{`{"command":"ls"}`, "", "json"},
		{`{"content":"` + strings.Repeat("x", maxInput) + `"}`, "", "none"},
	} {
		in := &hitl.Interaction{Action: &hitl.Action{Name: "x", Args: json.RawMessage(c.args)}}
		if c.schema != "" {
			in.ArgsSchema = json.RawMessage(c.schema)
		}
		ev, ok := editForm(in)
		got := "none"
		switch {
		case ok && ev.fields != nil:
			got = "fields"
		case ok:
			got = "json"
		}
		if got != c.want {
			t.Errorf("args %.40s, schema %.40s: got %s, want %s", c.args, c.schema, got, c.want)
		}
	}
}
