package ui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl/internal/turns"
)

// recordCards records in window.__cards the id of every card the page
// shows, in order.
func recordCards() chromedp.Action[chromedp.Void] {
	return onNewDocument(`(() => {
		window.__cards = [];
		new MutationObserver(() => {
			for (const el of document.querySelectorAll("article.card")) {
				if (!window.__cards.includes(el.dataset.id)) window.__cards.push(el.dataset.id);
			}
		}).observe(document, { subtree: true, childList: true });
	})();`)
}

// rule is what the tests read of a rule.
type rule struct {
	ID            string          `json:"rule_id"`
	Effect        string          `json:"effect"`
	SourceAgent   string          `json:"source_agent"`
	ActionName    string          `json:"action_name"`
	Kind          string          `json:"kind"`
	Match         json.RawMessage `json:"match"`
	Message       string          `json:"message"`
	CreatedBy     string          `json:"created_by"`
	ExpiresAt     *time.Time      `json:"expires_at"`
	RevokedAt     *time.Time      `json:"revoked_at"`
	RevokedBy     string          `json:"revoked_by"`
	InteractionID string          `json:"interaction_id"`
}

// rules lists every rule through the API, as the agent's caller sees them.
func (s *hitlServer) rules(t *testing.T) []rule {
	t.Helper()
	code, data := s.call(t, http.MethodGet, "/api/v1/rules", nil)
	var list struct {
		Rules []rule `json:"rules"`
	}
	if err := json.Unmarshal(data, &list); code != http.StatusOK || err != nil {
		t.Fatalf("GET /api/v1/rules: %d %s", code, data)
	}
	return list.Rules
}

// askStatus asks an action as askAction does and returns the interaction
// as created: a rule may have answered it already.
func (s *hitlServer) askStatus(t *testing.T, name string, args map[string]any) (id, status, channel string) {
	t.Helper()
	code, data := s.call(t, http.MethodPost, "/api/v1/interactions", map[string]any{
		"interaction_type": "action", "source_agent": "claude-code",
		"action": map[string]any{"name": name, "args": args},
	})
	var in struct {
		ID     string `json:"interaction_id"`
		Status string `json:"status"`
		Result *struct {
			Channel string `json:"channel"`
		} `json:"result"`
	}
	if err := json.Unmarshal(data, &in); code != http.StatusCreated || err != nil {
		t.Fatalf("ask: %d %s", code, data)
	}
	if in.Result != nil {
		channel = in.Result.Channel
	}
	return in.ID, in.Status, channel
}

// TestActionAlwaysAllow: Always allow… previews the rule it suggests
// (Bash: the command's first two words), which can be changed before it
// is saved with an expiry; the answer approves and makes the rule; the
// next call it matches is approved at once and never shows a card, while
// one it does not match (shell control syntax) does.
func TestActionAlwaysAllow(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	id := srv.askAction(t, "Bash", map[string]any{"command": "git status --short"}, nil)
	wait := srv.wait(t, id)
	p := openPage(t, srv, recordOutcomes(), recordCards())
	p.waitCard(id)
	p.click(id, ".btn-always")
	p.waitFocus(id, ".rule-kind")
	preview := in(id, ".rule-preview")
	if got, want := p.text(preview), "Allow Bash from claude-code when command starts with “git status”, for 1 day."; got != want {
		t.Errorf("preview %q, want %q", got, want)
	}
	// The expiry is part of the preview, and of the rule.
	p.setSelect(in(id, ".rule-expiry"), "86400") // the default, chosen again
	if got, want := p.text(preview), "Allow Bash from claude-code when command starts with “git status”, for 1 day."; got != want {
		t.Errorf("preview %q, want %q", got, want)
	}
	// Every call: said plainly.
	p.setSelect(in(id, ".rule-kind"), "any")
	p.waitJS(fmt.Sprintf(`!document.querySelector(%s).hidden`, js(in(id, ".rule-warn"))))
	if got, want := p.text(in(id, ".rule-warn")), "Every Bash call from claude-code will run without asking."; got != want {
		t.Errorf("warning %q, want %q", got, want)
	}
	// Exactly this command: no further arguments.
	p.setSelect(in(id, ".rule-kind"), "command")
	if got, want := p.text(preview), "Allow Bash from claude-code when command is exactly “git status --short”, for 1 day."; got != want {
		t.Errorf("preview %q, want %q", got, want)
	}
	p.setSelect(in(id, ".rule-kind"), "prefix")
	if got := eval[string](p, fmt.Sprintf(`document.querySelector(%s).value`, js(in(id, ".rule-value-input")))); got != "git status" {
		t.Errorf("prefix back to %q, want the suggestion", got)
	}
	// A prefix says what else it lets through.
	p.waitJS(fmt.Sprintf(`!document.querySelector(%s).hidden`, js(in(id, ".rule-warn"))))
	if got := p.text(in(id, ".rule-warn")); !strings.Contains(got, "“git status --output=FILE”") || !strings.Contains(got, "When a command is exactly") {
		t.Errorf("prefix warning %q, want it to name further arguments and the exact choice", got)
	}
	before := time.Now()
	p.click(id, ".btn-submit")
	assertValue(t, awaitResult(t, wait), `{"decision": "approve"}`)
	p.waitOutcome(id, "Approved by local via the web inbox. The rule is saved: see Rules in the top bar.")

	rules := srv.rules(t)
	if len(rules) != 1 {
		t.Fatalf("%d rules, want 1: %+v", len(rules), rules)
	}
	r := rules[0]
	if r.Effect != "allow" || r.SourceAgent != "claude-code" || r.ActionName != "Bash" || r.InteractionID != id ||
		string(r.Match) != `{"arg":"command","prefix":"git status"}` {
		t.Errorf("rule %+v (match %s)", r, r.Match)
	}
	if r.ExpiresAt == nil || r.ExpiresAt.Before(before.Add(24*time.Hour-time.Minute)) || r.ExpiresAt.After(time.Now().Add(24*time.Hour+time.Minute)) {
		t.Errorf("rule expires at %v, want a day from now", r.ExpiresAt)
	}

	// The same call again: decided by the rule, no card.
	again, status, channel := srv.askStatus(t, "Bash", map[string]any{"command": "git status --short"})
	if status != "answered" || channel != "rule" {
		t.Fatalf("the same call again: %s via %q, want answered via rule", status, channel)
	}
	// One the rule does not match shows a card; the stream is in order,
	// so a card for the one before would have come first.
	other := srv.askAction(t, "Bash", map[string]any{"command": "git status; rm -rf /"}, nil)
	p.waitCard(other)
	if cards := eval[[]string](p, `window.__cards`); slices.Contains(cards, again) {
		t.Errorf("a card was shown for %s, which the rule decided: %v", again, cards)
	}
	// The history has it, decided by the rule.
	p.do(chromedp.Navigate(srv.URL + "/#history"))
	item := fmt.Sprintf(`#history-list li[data-id=%q]`, again)
	p.waitJS(fmt.Sprintf(`document.querySelector(%s)`, js(item)))
	got := p.text(item)
	for _, want := range []string{"Bash", "git status --short", "Allowed by a rule", "By rule " + r.ID} {
		if !strings.Contains(got, want) {
			t.Errorf("history item %q lacks %q", got, want)
		}
	}
}

// TestActionAlwaysSuggestions: what Always allow… suggests for a file
// write (its directory), a command with shell control syntax (exactly that
// command: a prefix never matches it), and any other tool (every call).
func TestActionAlwaysSuggestions(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	write := srv.askAction(t, "Write", map[string]any{"file_path": "/srv/app/config [prod]/app.yaml", "content": "debug: false\n"}, nil)
	chained := srv.askAction(t, "Bash", map[string]any{"command": "cd /srv/app && make"}, nil)
	other := srv.askAction(t, "notify", map[string]any{"channel": "#ops", "text": "deploying"}, nil)
	p := openPage(t, srv)
	for _, c := range []struct{ id, want string }{
		{write, "Allow Write from claude-code when file_path matches “/srv/app/config \\[prod\\]/**”, for 1 day."},
		{chained, "Allow Bash from claude-code when command is exactly “cd /srv/app && make”, for 1 day."},
		{other, "Allow notify from claude-code for any arguments, for 1 day."},
	} {
		p.waitCard(c.id)
		p.click(c.id, ".btn-always")
		if got := p.text(in(c.id, ".rule-preview")); got != c.want {
			t.Errorf("preview %q, want %q", got, c.want)
		}
	}
	// A prefix with shell control syntax is refused in the page.
	p.setSelect(in(chained, ".rule-kind"), "prefix")
	p.typeInto(in(chained, ".rule-value-input"), "cd /srv/app && make")
	p.click(chained, ".btn-submit")
	p.waitJS(fmt.Sprintf(`document.querySelector(%s).textContent.includes("cannot hold")`, js(in(chained, ".rule-value .field-error"))))
	srv.stillPending(t, chained)
}

// setSelect chooses value in the select sel matches, as a person would
// (a change event follows).
func (p *page) setSelect(sel, value string) {
	p.t.Helper()
	p.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const s = document.querySelector(%s); s.value = %s;
		s.dispatchEvent(new Event("change", {bubbles: true})); })()`, js(sel), js(value))))
}

// TestActionAlwaysAllAgents: for an action with a kind, Always allow…
// offers the rule for all the person's agents: it is made on the kind,
// matching the field of the input that holds the chosen argument, and
// decides another agent's tool of that kind.
func TestActionAlwaysAllAgents(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	id := srv.ask(t, map[string]any{
		"interaction_type": "action", "source_agent": "claude-code",
		"action": map[string]any{"name": "Write", "args": map[string]any{"file_path": "/srv/app/notes/a.md", "content": "x"},
			"kind": "file.write", "input": map[string]any{"path": "/srv/app/notes/a.md", "content": "x"}},
	})
	plain := srv.askAction(t, "Bash", map[string]any{"command": "ls"}, nil)
	wait := srv.wait(t, id)
	p := openPage(t, srv)
	p.waitCard(plain)
	p.click(plain, ".btn-always")
	if visible := eval[bool](p, fmt.Sprintf(`!document.querySelector(%s).hidden`, js(in(plain, ".rule-scope-field")))); visible {
		t.Error("the all-agents choice is offered for an action of no kind")
	}
	p.waitCard(id)
	p.click(id, ".btn-always")
	p.do(chromedp.Click(chromedp.CSS(in(id, ".rule-scope"))))
	if got, want := p.text(in(id, ".rule-preview")), "Allow every file write from all your agents when path matches “/srv/app/notes/**”, for 1 day."; got != want {
		t.Errorf("preview %q, want %q", got, want)
	}
	p.click(id, ".btn-submit")
	assertValue(t, awaitResult(t, wait), `{"decision": "approve"}`)
	var rule *rule
	for _, r := range srv.rules(t) {
		if r.InteractionID == id {
			rule = &r
		}
	}
	if rule == nil || rule.SourceAgent != "*" || rule.ActionName != "" || rule.Kind != "file.write" || string(rule.Match) != `{"arg":"path","glob":"/srv/app/notes/**"}` {
		t.Fatalf("rule %+v", rule)
	}
	// Gemini CLI's write_file into the same folder is decided by it.
	code, data := srv.call(t, http.MethodPost, "/api/v1/interactions", map[string]any{
		"interaction_type": "action", "source_agent": "gemini-cli",
		"action": map[string]any{"name": "write_file", "args": map[string]any{"file_path": "/srv/app/notes/b.md", "content": "y"},
			"kind": "file.write", "input": map[string]any{"path": "/srv/app/notes/b.md", "content": "y"}},
	})
	if code != http.StatusCreated || !strings.Contains(string(data), `"channel":"rule"`) {
		t.Errorf("gemini's write_file: %d %s, want answered by the rule", code, data)
	}
}

// TestActionCardNamesKind: an action's card names its tool and, beside
// it, its kind; one of no kind names only its tool.
func TestActionCardNamesKind(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	shell := srv.ask(t, map[string]any{
		"interaction_type": "action", "source_agent": "codex",
		"action": map[string]any{"name": "exec_command", "args": map[string]any{"cmd": "make"},
			"kind": "shell", "input": map[string]any{"command": "make"}},
	})
	plain := srv.askAction(t, "notify", map[string]any{"text": "hi"}, nil)
	p := openPage(t, srv)
	p.waitCard(shell)
	p.waitCard(plain)
	if got := p.text(in(shell, ".card-head")); !strings.Contains(got, "exec_command") || !strings.Contains(got, "shell command") || !strings.Contains(got, "codex") {
		t.Errorf("card head %q, want the tool, its kind and the agent", got)
	}
	if n := eval[int](p, fmt.Sprintf(`document.querySelectorAll(%s).length`, js(in(plain, ".card-kind")))); n != 0 {
		t.Errorf("a tool of no kind shows %d kind labels", n)
	}
}
