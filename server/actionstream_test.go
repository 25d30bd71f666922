package server_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/server"
)

// TestActionOnTheStream: an action's hitl:question carries its action,
// args_schema, decisions and reject_requires_message; an action a rule
// answers as it is made sends no hitl:question (the card would only
// flash), but its hitl:resolved and hitl:cancel still go out.
func TestActionOnTheStream(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	c := dialWS(t, ts, nil)
	readReplay(t, c)

	req := bashAction("make deploy")
	req["decisions"] = []any{"approve", "reject"}
	req["reject_requires_message"] = true
	in := ts.create(t, req)
	q := readWSType(t, c, "hitl:question", in.ID)
	for k, want := range map[string]any{
		"interaction_type":        "action",
		"question":                "Run Bash?",
		"action":                  map[string]any{"name": "Bash", "args": map[string]any{"command": "make deploy"}, "description": "Run it"},
		"args_schema":             nil,
		"decisions":               []any{"approve", "reject"},
		"reject_requires_message": true,
		"options":                 []any{},
		"form_schema":             nil,
	} {
		if got, ok := q[k]; !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("hitl:question %s: got %#v (present %v), want %#v", k, got, ok, want)
		}
	}

	var r hitl.Rule
	ts.mustDo(t, "POST", "/api/v1/rules", map[string]any{"effect": "allow", "source_agent": "claude-code", "action_name": "Bash",
		"match": map[string]any{"arg": "command", "prefix": "git status"}}, http.StatusCreated, &r)
	ruled := ts.create(t, bashAction("git status"))
	if ruled.Status != hitl.StatusAnswered {
		t.Fatalf("ruled action: %s", ruled.Status)
	}
	m := readWSRaw(t, c)
	if m["type"] != "hitl:resolved" || m["interaction_id"] != ruled.ID || m["channel"] != "rule" || m["responded_by"] != "rule:"+r.ID {
		t.Errorf("after a rule's answer: got %v, want hitl:resolved via rule (no hitl:question)", m)
	}
	if m = readWSRaw(t, c); m["type"] != "hitl:cancel" || m["interaction_id"] != ruled.ID || m["reason"] != "answered" {
		t.Errorf("then: got %v, want hitl:cancel answered", m)
	}
	// An approval's question has none of the action fields.
	appr := ts.create(t, map[string]any{"interaction_type": "approval", "question": "Deploy?"})
	q = readWSType(t, c, "hitl:question", appr.ID)
	for _, k := range []string{"action", "args_schema", "decisions", "reject_requires_message"} {
		if _, ok := q[k]; ok {
			t.Errorf("an approval's hitl:question has %q", k)
		}
	}
}

// TestRulesAuthorization: with authentication on, only admins make rules
// through the API; a person makes one by answering with always, sees
// only theirs, and revokes only theirs (others' are not found).
func TestRulesAuthorization(t *testing.T) {
	turns.Parallel(t)
	ts := newAuthServer(t, server.AuthOptions{})
	rule := map[string]any{"effect": "allow", "source_agent": "claude-code", "action_name": "Read"}
	for _, a := range []actor{ts.alice, ts.agent, ts.anon} {
		want := http.StatusForbidden
		if a.name == "anonymous" {
			want = http.StatusUnauthorized
		}
		if resp, body := ts.call(t, a, "POST", "/api/v1/rules", rule); resp.StatusCode != want {
			t.Errorf("%s makes a rule: %d, want %d: %s", a.name, resp.StatusCode, want, body)
		}
	}
	resp, body := ts.call(t, ts.admin, "POST", "/api/v1/rules", rule)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("admin makes a rule: %d %s", resp.StatusCode, body)
	}
	byRoot := decode[hitl.Rule](t, body)

	resp, body = ts.call(t, ts.agent, "POST", "/api/v1/interactions", bashAction("npm test"))
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("agent asks: %d %s", resp.StatusCode, body)
	}
	in := decode[hitl.Interaction](t, body)
	resp, body = ts.call(t, ts.alice, "POST", "/api/v1/interactions/"+in.ID+"/respond",
		map[string]any{"value": map[string]any{"decision": "approve", "always": map[string]any{"match": map[string]any{"arg": "command", "prefix": "npm test"}}}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("alice answers with always: %d %s", resp.StatusCode, body)
	}

	list := func(a actor) []hitl.Rule {
		t.Helper()
		resp, body := ts.call(t, a, "GET", "/api/v1/rules", nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s lists rules: %d %s", a.name, resp.StatusCode, body)
		}
		return decode[struct {
			Rules []hitl.Rule `json:"rules"`
		}](t, body).Rules
	}
	if got := list(ts.admin); len(got) != 2 {
		t.Errorf("admin lists %d rules, want 2", len(got))
	}
	mine := list(ts.alice)
	if len(mine) != 1 || mine[0].CreatedBy != "alice" || mine[0].InteractionID != in.ID || mine[0].SourceAgent != "claude-code" {
		t.Fatalf("alice lists %+v, want her one rule", mine)
	}
	if got := list(ts.bob); len(got) != 0 {
		t.Errorf("bob lists %d rules, want none", len(got))
	}
	if got := list(ts.agent); len(got) != 0 {
		t.Errorf("the agent lists %d rules, want none", len(got))
	}
	for _, tt := range []struct {
		a      actor
		id     string
		status int
	}{
		{ts.alice, byRoot.ID, http.StatusNotFound},
		{ts.bob, mine[0].ID, http.StatusNotFound},
		{ts.agent, mine[0].ID, http.StatusNotFound},
		{ts.alice, mine[0].ID, http.StatusOK},
		{ts.admin, byRoot.ID, http.StatusOK},
	} {
		if resp, body := ts.call(t, tt.a, "DELETE", "/api/v1/rules/"+tt.id, nil); resp.StatusCode != tt.status {
			t.Errorf("%s revokes %s: %d, want %d: %s", tt.a.name, tt.id, resp.StatusCode, tt.status, body)
		}
	}
	// The agent cannot get a rule from an answer: it cannot answer.
	_, body = ts.call(t, ts.agent, "POST", "/api/v1/interactions", bashAction("npm test"))
	in = decode[hitl.Interaction](t, body)
	if in.Status != hitl.StatusPending {
		t.Fatalf("after revoking: %s", in.Status)
	}
	if resp, _ := ts.call(t, ts.agent, "POST", "/api/v1/interactions/"+in.ID+"/respond", map[string]any{"value": map[string]any{"decision": "approve", "always": true}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("the agent answers its own action with always: %d, want 403", resp.StatusCode)
	}
}

// decode decodes a JSON body into a T.
func decode[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return v
}
