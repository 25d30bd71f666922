package server_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/turns"
)

// bashAction is the body that asks to run command as claude-code.
func bashAction(command string) map[string]any {
	return map[string]any{
		"interaction_type": "action",
		"action":           map[string]any{"name": "Bash", "args": map[string]any{"command": command}, "description": "Run it"},
		"source_agent":     "claude-code",
		"timeout":          600,
	}
}

// errorOf decodes an error body.
func errorOf(t *testing.T, body []byte) (code, message string) {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("decode error %s: %v", body, err)
	}
	return e.Error.Code, e.Error.Message
}

func TestActionOverHTTP(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	req := bashAction("terraform apply -auto-approve")
	req["args_schema"] = map[string]any{"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string", "minLength": 1}}, "required": []any{"command"}}
	var created map[string]any
	ts.mustDo(t, "POST", "/api/v1/interactions", req, http.StatusCreated, &created)
	for k, want := range map[string]any{
		"question":                "Run Bash?",
		"decisions":               []any{"approve", "edit", "reject", "respond"},
		"reject_requires_message": false,
		"action": map[string]any{"name": "Bash", "args": map[string]any{"command": "terraform apply -auto-approve"}, "description": "Run it",
			"risks": []any{map[string]any{"why": "applies infrastructure changes (terraform apply)"}}},
		"summary": "terraform apply -auto-approve",
	} {
		if !reflect.DeepEqual(created[k], want) {
			t.Errorf("%s: got %#v, want %#v", k, created[k], want)
		}
	}
	if created["args_schema"] == nil {
		t.Error("args_schema: missing")
	}
	id := created["interaction_id"].(string)

	// 422s, each with its reason; the interaction stays pending.
	for value, want := range map[string]string{
		`{"decision":"edit","args":{"command":""}}`: "at /command: minLength",
		`{"decision":"edit","args":{}}`:             "missing property 'command'",
		`{"decision":"respond"}`:                    "respond needs a message",
		`{"decision":"maybe"}`:                      "decision must be one of",
		`{"decision":"approve","note":"x"}`:         `unknown field "note"`,
		`7`:                                         `{"decision"`,
	} {
		status, body := ts.do(t, "POST", "/api/v1/interactions/"+id+"/respond", `{"value":`+value+`}`)
		code, msg := errorOf(t, body)
		if status != http.StatusUnprocessableEntity || code != hitl.EVALUE || !strings.Contains(msg, want) {
			t.Errorf("answer %s: %d %s %q, want 422 containing %q", value, status, code, msg, want)
		}
	}

	var answered hitl.Interaction
	ts.mustDo(t, "POST", "/api/v1/interactions/"+id+"/respond", map[string]any{"value": map[string]any{"decision": "edit", "args": map[string]any{"command": "terraform plan"}}}, http.StatusOK, &answered)
	if got, want := string(answered.Result.Value), `{"decision":"edit","args":{"command":"terraform plan"}}`; got != want {
		t.Errorf("value: got %s, want %s", got, want)
	}
	if got, want := string(answered.Result.ArgsDiff), `[{"op":"replace","path":"/command","value":"terraform plan"}]`; got != want {
		t.Errorf("args_diff: got %s, want %s", got, want)
	}
	// A second answer is a conflict, as for every type.
	if status, _ := ts.do(t, "POST", "/api/v1/interactions/"+id+"/respond", `{"value":"approve"}`); status != http.StatusConflict {
		t.Errorf("second answer: %d, want 409", status)
	}
}

func TestActionRequestErrors(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	for name, tt := range map[string]struct {
		body string
		want string
	}{
		"no action":     {`{"interaction_type":"action"}`, `needs "action"`},
		"args an array": {`{"interaction_type":"action","action":{"name":"Bash","args":[1]}}`, "action.args must be a JSON object"},
		"action a list": {`{"interaction_type":"action","action":["Bash"]}`, "action"},
		"options":       {`{"interaction_type":"action","action":{"name":"Bash"},"options":["a"]}`, "action takes no options"},
		"form_schema":   {`{"interaction_type":"action","action":{"name":"Bash"},"form_schema":{"type":"object"}}`, "form_schema is only for interaction_type form"},
		"bad decision":  {`{"interaction_type":"action","action":{"name":"Bash"},"decisions":["nod"]}`, "decisions[0]"},
		"on approval":   {`{"interaction_type":"approval","question":"Q?","action":{"name":"Bash"}}`, "only for interaction_type action"},
	} {
		status, body := ts.do(t, "POST", "/api/v1/interactions", tt.body)
		code, msg := errorOf(t, body)
		if status != http.StatusBadRequest || code != hitl.EINVALID || !strings.Contains(msg, tt.want) {
			t.Errorf("%s: %d %s %q, want 400 containing %q", name, status, code, msg, tt.want)
		}
	}
}

// TestRulesOverHTTP: in local mode (an admin), a rule made through the API
// answers matching actions at once; revoked, it is kept but decides
// nothing.
func TestRulesOverHTTP(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	var r hitl.Rule
	ts.mustDo(t, "POST", "/api/v1/rules", map[string]any{
		"effect": "deny", "source_agent": "*", "action_name": "Bash",
		"match": map[string]any{"arg": "command", "prefix": "rm -rf"}, "message": "never rm -rf",
	}, http.StatusCreated, &r)
	if r.ID == "" || r.CreatedBy != hitl.LocalCaller || r.Match.Prefix != "rm -rf" || r.RevokedAt != nil {
		t.Fatalf("rule: %+v", r)
	}

	var denied hitl.Interaction
	ts.mustDo(t, "POST", "/api/v1/interactions", bashAction("rm -rf /tmp/x"), http.StatusCreated, &denied)
	if denied.Status != hitl.StatusAnswered || denied.Result.RuleID != r.ID || denied.Result.Channel != "rule" ||
		denied.Result.RespondedBy != "rule:"+r.ID || string(denied.Result.Value) != `{"decision":"reject","message":"never rm -rf"}` {
		t.Errorf("denied by the rule: %s %+v", denied.Status, denied.Result)
	}
	var waited hitl.Interaction
	ts.mustDo(t, "GET", "/api/v1/interactions/"+denied.ID+"/wait?timeout=1", nil, http.StatusOK, &waited)
	if waited.Status != hitl.StatusAnswered {
		t.Errorf("wait: %s", waited.Status)
	}
	// Chained after a harmless command, it is denied all the same: a deny
	// rule reads every command of the line.
	var chained hitl.Interaction
	ts.mustDo(t, "POST", "/api/v1/interactions", bashAction("ls; rm -rf /"), http.StatusCreated, &chained)
	if chained.Status != hitl.StatusAnswered || chained.Result.RuleID != r.ID {
		t.Errorf("chained command: %s, want denied by the rule", chained.Status)
	}
	// One that computes its flags cannot be told: a person decides.
	var computed hitl.Interaction
	ts.mustDo(t, "POST", "/api/v1/interactions", bashAction("rm $FLAGS /"), http.StatusCreated, &computed)
	if computed.Status != hitl.StatusPending {
		t.Errorf("rm $FLAGS: %s, want pending", computed.Status)
	}

	var list struct {
		Rules      []hitl.Rule `json:"rules"`
		NextCursor *string     `json:"next_cursor"`
	}
	ts.mustDo(t, "GET", "/api/v1/rules?active=true", nil, http.StatusOK, &list)
	if len(list.Rules) != 1 || list.Rules[0].ID != r.ID || list.NextCursor != nil {
		t.Errorf("active rules: %+v", list)
	}
	var revoked hitl.Rule
	ts.mustDo(t, "DELETE", "/api/v1/rules/"+r.ID, nil, http.StatusOK, &revoked)
	if revoked.RevokedAt == nil || revoked.RevokedBy != hitl.LocalCaller {
		t.Errorf("revoked: %+v", revoked)
	}
	ts.mustDo(t, "GET", "/api/v1/rules?active=true", nil, http.StatusOK, &list)
	if len(list.Rules) != 0 {
		t.Errorf("active rules after revoking: %+v", list.Rules)
	}
	ts.mustDo(t, "GET", "/api/v1/rules", nil, http.StatusOK, &list)
	if len(list.Rules) != 1 {
		t.Errorf("every rule after revoking: %d, want the revoked one kept", len(list.Rules))
	}
	var again hitl.Interaction
	ts.mustDo(t, "POST", "/api/v1/interactions", bashAction("rm -rf /tmp/y"), http.StatusCreated, &again)
	if again.Status != hitl.StatusPending {
		t.Errorf("after revoking: %s, want pending", again.Status)
	}

	for name, tt := range map[string]struct {
		method, path, body string
		status             int
		want               string
	}{
		"no effect":        {"POST", "/api/v1/rules", `{"source_agent":"a","action_name":"Bash"}`, 400, "effect must be allow or deny"},
		"misspelt match":   {"POST", "/api/v1/rules", `{"effect":"allow","source_agent":"a","action_name":"Bash","match":{"arg":"command","prefx":"ls"}}`, 400, `unknown field "prefx"`},
		"unsafe prefix":    {"POST", "/api/v1/rules", `{"effect":"allow","source_agent":"a","action_name":"Bash","match":{"arg":"command","prefix":"ls && rm"}}`, 400, "shell control syntax"},
		"not an object":    {"POST", "/api/v1/rules", `[1]`, 400, ""},
		"bad active":       {"GET", "/api/v1/rules?active=yes", "", 400, "active must be true or false"},
		"bad limit":        {"GET", "/api/v1/rules?limit=0", "", 400, "limit"},
		"bad cursor":       {"GET", "/api/v1/rules?cursor=x", "", 400, "cursor"},
		"get unknown":      {"GET", "/api/v1/rules/nope", "", 404, `rule "nope" not found`},
		"revoke unknown":   {"DELETE", "/api/v1/rules/nope", "", 404, `rule "nope" not found`},
		"revoke twice, ok": {"DELETE", "/api/v1/rules/" + r.ID, "", 200, ""},
	} {
		var body any
		if tt.body != "" {
			body = tt.body
		}
		status, data := ts.do(t, tt.method, tt.path, body)
		if status != tt.status {
			t.Errorf("%s: status %d, want %d: %s", name, status, tt.status, data)
			continue
		}
		if tt.want != "" {
			if _, msg := errorOf(t, data); !strings.Contains(msg, tt.want) {
				t.Errorf("%s: message %q, want it to contain %q", name, msg, tt.want)
			}
		}
	}
}
