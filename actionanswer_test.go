package hitl_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
)

// writeAction is an action with an args_schema, all four decisions.
func writeAction(t *testing.T, mod func(*hitl.CreateRequest)) *hitl.Interaction {
	t.Helper()
	req := hitl.CreateRequest{
		Type:        hitl.TypeAction,
		SourceAgent: "claude-code",
		Action:      &hitl.Action{Name: "Write", Args: json.RawMessage(`{"file_path":"src/a.go","content":"package a\n","mode":420}`)},
		ArgsSchema: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string","minLength":1},"content":{"type":"string"},"mode":{"type":"integer"}},
			"required":["file_path","content"],"additionalProperties":false}`),
	}
	if mod != nil {
		mod(&req)
	}
	in := create(t, req)
	in.ID = "01J-write"
	return in
}

func TestNormalizeActionAnswer(t *testing.T) {
	t.Parallel()
	in := writeAction(t, nil)
	tests := []struct {
		name  string
		value string
		want  string // canonical value
		args  string // the args to run with
		diff  string // args_diff
	}{
		{"approve", `{"decision":"approve"}`, `{"decision":"approve"}`, `{"file_path":"src/a.go","content":"package a\n","mode":420}`, ""},
		{"approve word", `"approve"`, `{"decision":"approve"}`, "", ""},
		{"approved", `"Approved"`, `{"decision":"approve"}`, "", ""},
		{"yes", `" yes "`, `{"decision":"approve"}`, "", ""},
		{"allow", `"allow"`, `{"decision":"approve"}`, "", ""},
		{"accept", `"ACCEPT"`, `{"decision":"approve"}`, "", ""},
		{"true", `true`, `{"decision":"approve"}`, "", ""},
		{"decision accept", `{"decision":"accept"}`, `{"decision":"approve"}`, "", ""},
		{"approve with the same args", `{"decision":"approve","args":{"mode":420.0,"content":"package a\n","file_path":"src/a.go"}}`, `{"decision":"approve"}`, "", ""},
		{"approve null fields", `{"decision":"approve","args":null,"message":null,"always":null}`, `{"decision":"approve"}`, "", ""},
		{"reject", `{"decision":"reject"}`, `{"decision":"reject"}`, "", ""},
		{"reject with message", `{"decision":"reject","message":"  not on main  "}`, `{"decision":"reject","message":"not on main"}`, "", ""},
		{"reject word", `"reject"`, `{"decision":"reject"}`, "", ""},
		{"no", `"no"`, `{"decision":"reject"}`, "", ""},
		{"deny", `"Deny"`, `{"decision":"reject"}`, "", ""},
		{"false", `false`, `{"decision":"reject"}`, "", ""},
		{"decision deny", `{"decision":"deny","message":"<b>no</b> & never"}`, `{"decision":"reject","message":"<b>no</b> & never"}`, "", ""},
		{"respond", `{"decision":"respond","message":"Use src/b.go instead"}`, `{"decision":"respond","message":"Use src/b.go instead"}`, "", ""},
		{"object as a string", `"{\"decision\":\"reject\",\"message\":\"no\"}"`, `{"decision":"reject","message":"no"}`, "", ""},
		{
			"edit", `{"decision":"edit","args":{"file_path":"src/b.go","content":"package a\n","mode":420}}`,
			`{"decision":"edit","args":{"content":"package a\n","file_path":"src/b.go","mode":420}}`,
			`{"content":"package a\n","file_path":"src/b.go","mode":420}`,
			`[{"op":"replace","path":"/file_path","value":"src/b.go"}]`,
		},
		{
			"edit adds and removes", `{"decision":"edit","args":{"file_path":"src/a.go","content":"package b\n"}}`,
			`{"decision":"edit","args":{"content":"package b\n","file_path":"src/a.go"}}`,
			`{"content":"package b\n","file_path":"src/a.go"}`,
			`[{"op":"replace","path":"/content","value":"package b\n"},{"op":"remove","path":"/mode"}]`,
		},
		{"edit that changes nothing", `{"decision":"edit","args":{"file_path":"src/a.go","content":"package a\n","mode":420}}`, `{"decision":"approve"}`, `{"file_path":"src/a.go","content":"package a\n","mode":420}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, err := hitl.NormalizeActionAnswer(in, json.RawMessage(tt.value))
			if err != nil {
				t.Fatalf("NormalizeActionAnswer(%s): %v", tt.value, err)
			}
			if got := string(a.Value); got != tt.want {
				t.Errorf("value: got %s, want %s", got, tt.want)
			}
			if tt.args != "" && string(a.Args) != tt.args {
				t.Errorf("args: got %s, want %s", a.Args, tt.args)
			}
			if got := string(a.ArgsDiff); got != tt.diff {
				t.Errorf("args_diff: got %s, want %s", got, tt.diff)
			}
			if a.Always != nil {
				t.Errorf("always: got %+v, want none", a.Always)
			}
			// NormalizeAnswer gives the same value.
			v, err := hitl.NormalizeAnswer(in, json.RawMessage(tt.value))
			if err != nil || string(v) != tt.want {
				t.Errorf("NormalizeAnswer: got %s, %v; want %s", v, err, tt.want)
			}
		})
	}
}

func TestNormalizeActionAnswerRejects(t *testing.T) {
	t.Parallel()
	in := writeAction(t, nil)
	strict := writeAction(t, func(r *hitl.CreateRequest) {
		r.Decisions = []hitl.Decision{"approve", "reject"}
		r.RejectRequiresMessage = true
	})
	tests := []struct {
		name  string
		in    *hitl.Interaction
		value string
		want  []string
	}{
		{"null", in, `null`, []string{"value is required"}},
		{"empty", in, ``, []string{"value is required"}},
		{"not JSON", in, `{decision}`, []string{"not valid JSON"}},
		{"number", in, `1`, []string{`{"decision": "approve" | "edit" | "reject" | "respond", …}`}},
		{"array", in, `["approve"]`, []string{`{"decision"`}},
		{"unknown word", in, `"maybe"`, []string{`decision must be one of approve, edit, reject, respond; got "maybe"`}},
		{"no decision", in, `{"message":"hi"}`, []string{"decision is required"}},
		{"decision not a string", in, `{"decision":true}`, []string{"decision must be a string"}},
		{"message not a string", in, `{"decision":"reject","message":5}`, []string{"message must be a string"}},
		{"unknown field", in, `{"decision":"approve","comment":"ok"}`, []string{`unknown field "comment"`}},
		{"field twice", in, `{"decision":"reject","decision":"approve"}`, []string{`field "decision" twice`}},
		{"edit not allowed", strict, `{"decision":"edit","args":{"file_path":"x","content":""}}`, []string{"edit is not allowed for this action; allowed: approve, reject"}},
		{"respond not allowed", strict, `{"decision":"respond","message":"x"}`, []string{"respond is not allowed for this action; allowed: approve, reject"}},
		{"reason required", strict, `{"decision":"reject"}`, []string{"a reason is required"}},
		{"reason required, blank", strict, `{"decision":"reject","message":"   "}`, []string{"a reason is required"}},
		{"reason required, word", strict, `"deny"`, []string{"a reason is required"}},
		{"reject message too long", in, `{"decision":"reject","message":"` + strings.Repeat("m", 16<<10+1) + `"}`, []string{"message is limited to 16384 bytes"}},
		{"respond without message", in, `{"decision":"respond"}`, []string{"respond needs a message"}},
		{"respond word", in, `"respond"`, []string{"respond needs a message"}},
		{"edit without args", in, `{"decision":"edit"}`, []string{"edit needs args"}},
		{"edit word", in, `"edit"`, []string{"edit needs args"}},
		{"edit args not an object", in, `{"decision":"edit","args":"ls"}`, []string{"args must be an object"}},
		{"edit args invalid", in, `{"decision":"edit","args":{"file_path":"","mode":"rw"}}`, []string{"at /: missing property 'content'", "at /file_path: minLength", "at /mode: got string, want integer"}},
		{"edit args extra field", in, `{"decision":"edit","args":{"file_path":"a","content":"","owner":"root"}}`, []string{"additional properties 'owner' not allowed"}},
		{"edit args twice", in, `{"decision":"edit","args":{"file_path":"a","file_path":"/etc/passwd","content":""}}`, []string{`field "file_path" twice`}},
		{"edit with message", in, `{"decision":"edit","args":{"file_path":"b","content":""},"message":"why"}`, []string{"message is only for reject and respond"}},
		{"approve with other args", in, `{"decision":"approve","args":{"file_path":"/etc/passwd","content":""}}`, []string{"args differ from the action's; send decision edit"}},
		{"approve with message", in, `{"decision":"approve","message":"fine"}`, []string{"message is only for reject and respond"}},
		{"reject with args", in, `{"decision":"reject","args":{}}`, []string{"args are only for edit"}},
		{"always on edit", in, `{"decision":"edit","args":{"file_path":"b","content":""},"always":true}`, []string{"always is only for approve and reject"}},
		{"always on an edit that changed nothing", in, `{"decision":"edit","args":{"file_path":"src/a.go","content":"package a\n","mode":420},"always":true}`, []string{"always is only for approve and reject"}},
		{"always on respond", in, `{"decision":"respond","message":"x","always":true}`, []string{"always is only for approve and reject"}},
		{"always not an object", in, `{"decision":"approve","always":"yes"}`, []string{"always must be true or"}},
		{"always unknown field", in, `{"decision":"approve","always":{"match":null,"forever":true}}`, []string{`unknown field "forever"`}},
		{"always bad match", in, `{"decision":"approve","always":{"match":{"arg":"file_path"}}}`, []string{"always: match needs exactly one of prefix, command, glob and equals"}},
		{"always misspelt match", in, `{"decision":"approve","always":{"match":{"arg":"file_path","globb":"src/**"}}}`, []string{`unknown field "globb"`}},
		{"always both expiries", in, `{"decision":"approve","always":{"ttl_seconds":60,"expires_at":"2030-01-01T00:00:00Z"}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, err := hitl.NormalizeActionAnswer(tt.in, json.RawMessage(tt.value))
			if tt.want == nil { // refused once the rule is made (AlwaysRule)
				if err != nil {
					t.Fatalf("NormalizeActionAnswer: %v", err)
				}
				_, err = tt.in.AlwaysRule(a.Always, hitl.Caller{Name: "alice"}, now)
				wantErr(t, err, hitl.ErrValue, "expires_at or ttl_seconds, not both")
				return
			}
			wantErr(t, err, hitl.ErrValue, tt.want...)
		})
	}
}

func TestActionAlways(t *testing.T) {
	t.Parallel()
	in := writeAction(t, nil)
	alice := hitl.Caller{Name: "alice", Channel: hitl.ChannelWeb}
	tests := []struct {
		name   string
		value  string
		effect hitl.RuleEffect
		match  string
		msg    string
		expiry time.Duration // from now; 0 for none
	}{
		{"true", `{"decision":"approve","always":true}`, hitl.RuleAllow, "null", "", 0},
		{"empty object", `{"decision":"approve","always":{}}`, hitl.RuleAllow, "null", "", 0},
		{"glob with ttl", `{"decision":"approve","always":{"match":{"arg":"file_path","glob":"src/**"},"ttl_seconds":3600}}`, hitl.RuleAllow, `{"arg":"file_path","glob":"src/**"}`, "", time.Hour},
		{"deny with the reason", `{"decision":"reject","message":"never in /etc","always":{"match":{"arg":"file_path","glob":"/etc/**"}}}`, hitl.RuleDeny, `{"arg":"file_path","glob":"/etc/**"}`, "never in /etc", 0},
		{"accept word with always", `{"decision":"accept","always":{"expires_at":"2026-03-05T05:06:07Z"}}`, hitl.RuleAllow, "null", "", 24*time.Hour - 123*time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, err := hitl.NormalizeActionAnswer(in, json.RawMessage(tt.value))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(a.Value), "always") {
				t.Errorf("value keeps always: %s", a.Value)
			}
			if a.Always == nil {
				t.Fatal("no rule asked for")
			}
			r, err := in.AlwaysRule(a.Always, alice, now)
			if err != nil {
				t.Fatal(err)
			}
			m, _ := json.Marshal(r.Match)
			if r.Effect != tt.effect || string(m) != tt.match || r.Message != tt.msg {
				t.Errorf("rule: got %s %s %q, want %s %s %q", r.Effect, m, r.Message, tt.effect, tt.match, tt.msg)
			}
			if r.SourceAgent != "claude-code" || r.ActionName != "Write" || r.CreatedBy != "alice" || r.InteractionID != in.ID {
				t.Errorf("scope: got agent %q action %q by %q from %q", r.SourceAgent, r.ActionName, r.CreatedBy, r.InteractionID)
			}
			switch {
			case tt.expiry == 0 && r.ExpiresAt != nil:
				t.Errorf("expires_at: got %v, want none", r.ExpiresAt)
			case tt.expiry != 0 && (r.ExpiresAt == nil || !r.ExpiresAt.Equal(now.Truncate(time.Millisecond).Add(tt.expiry))):
				t.Errorf("expires_at: got %v, want now + %v", r.ExpiresAt, tt.expiry)
			}
		})
	}
	// The "always" of an agent-less or past expiry is refused.
	noAgent := writeAction(t, func(r *hitl.CreateRequest) { r.SourceAgent = "" })
	a, err := hitl.NormalizeActionAnswer(noAgent, json.RawMessage(`{"decision":"approve","always":true}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = noAgent.AlwaysRule(a.Always, alice, now)
	wantErr(t, err, hitl.ErrValue, "no source_agent")
	a, err = hitl.NormalizeActionAnswer(in, json.RawMessage(`{"decision":"approve","always":{"expires_at":"2020-01-01T00:00:00Z"}}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = in.AlwaysRule(a.Always, alice, now)
	wantErr(t, err, hitl.ErrValue, "expires_at must be in the future")
}

// TestActionAnswerWithoutSchema: without args_schema an edit's args need
// only be an object; they come back with sorted keys and exact numbers.
func TestActionAnswerWithoutSchema(t *testing.T) {
	t.Parallel()
	in := create(t, bashRequest("ls"))
	a, err := hitl.NormalizeActionAnswer(in, json.RawMessage(`{"decision":"edit","args":{"timeout":12345678901234567890,"command":"ls -la"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(a.Args), `{"command":"ls -la","timeout":12345678901234567890}`; got != want {
		t.Errorf("args: got %s, want %s", got, want)
	}
	if got, want := string(a.ArgsDiff), `[{"op":"replace","path":"/command","value":"ls -la"},{"op":"add","path":"/timeout","value":12345678901234567890}]`; got != want {
		t.Errorf("args_diff: got %s, want %s", got, want)
	}
	if _, err := hitl.NormalizeActionAnswer(in, json.RawMessage(`{"decision":"edit","args":[1]}`)); err == nil {
		t.Error("an edit with an array for args was accepted")
	}
	if _, err := hitl.NormalizeActionAnswer(create(t, hitl.CreateRequest{Question: "Q?"}), json.RawMessage(`"approve"`)); err == nil {
		t.Error("an action answer to a free_text question was accepted")
	}
}

// TestActionEditSize: edited arguments may be as large as proposed ones
// (MaxActionArgsLen), with a schema or without, not larger.
func TestActionEditSize(t *testing.T) {
	t.Parallel()
	for _, in := range []*hitl.Interaction{writeAction(t, nil), create(t, bashRequest("ls"))} {
		big := `{"decision":"edit","args":{"file_path":"a","content":"` + strings.Repeat("x", 200<<10) + `"}}`
		if _, err := hitl.NormalizeActionAnswer(in, json.RawMessage(big)); err != nil {
			t.Errorf("an edit of 200 KiB (schema %v): %v", in.ArgsSchema != nil, err)
		}
		huge := `{"decision":"edit","args":{"file_path":"a","content":"` + strings.Repeat("x", hitl.MaxActionArgsLen) + `"}}`
		_, err := hitl.NormalizeActionAnswer(in, json.RawMessage(huge))
		wantErr(t, err, hitl.ErrValue, "args are limited to 262144 bytes")
	}
}
