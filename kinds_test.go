package hitl_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
)

// TestActionKind: an action's kind is one of the kinds, with an input
// that is an object; without a kind there is no input.
func TestActionKind(t *testing.T) {
	t.Parallel()
	ask := func(action string) (*hitl.Interaction, error) {
		var a hitl.Action
		if err := json.Unmarshal([]byte(action), &a); err != nil {
			t.Fatal(err)
		}
		return hitl.NewInteraction(hitl.CreateRequest{Type: hitl.TypeAction, SourceAgent: "codex", Timeout: 60, Action: &a}, hitl.Caller{Name: "agent", Role: hitl.RoleAgent}, now)
	}
	in, err := ask(`{"name":"exec_command","args":{"cmd":"ls"},"kind":"shell","input":{"command":"ls","cwd":"/p"}}`)
	if err != nil || in.Action.Kind != hitl.KindShell || string(in.Action.Input) != `{"command":"ls","cwd":"/p"}` {
		t.Fatalf("got %+v, %v", in, err)
	}
	for action, want := range map[string]string{
		`{"name":"x","args":{},"kind":"rocket"}`:                      "action.kind must be one of shell, file.write",
		`{"name":"x","args":{},"input":{"a":1}}`:                      "action.input goes with action.kind",
		`{"name":"x","args":{},"kind":"shell","input":[1]}`:           "action.input must be a JSON object",
		`{"name":"x","args":{},"kind":"shell","input":{"a":1,"a":2}}`: `action.input has field "a" twice`,
	} {
		_, err := ask(action)
		wantErr(t, err, hitl.ErrInvalid, want)
	}
}

// TestRuleOnKind: a rule on a kind decides every agent's tool of that
// kind, matching the action's input, not its args.
func TestRuleOnKind(t *testing.T) {
	t.Parallel()
	r := newRule(t, `{"effect":"allow","source_agent":"*","kind":"shell","match":{"arg":"command","prefix":"git status"}}`)
	codex := actionFrom("codex", "agent", "exec_command", `{"cmd":["bash","-lc","git status"]}`)
	codex.Action.Kind, codex.Action.Input = hitl.KindShell, hitl.ShellInput("git status -s", "/p")
	gemini := actionFrom("gemini-cli", "agent", "run_shell_command", `{"command":"git status"}`)
	gemini.Action.Kind, gemini.Action.Input = hitl.KindShell, hitl.ShellInput("git status; rm -rf ~", "/p")
	noKind := actionFrom("claude-code", "agent", "Bash", `{"command":"git status"}`)
	for _, tt := range []struct {
		name string
		in   *hitl.Interaction
		want bool
	}{
		{"codex's shell", codex, true},
		{"gemini's chained command", gemini, false},
		{"a call of no kind", noKind, false},
	} {
		if got := hitl.DecidingRule([]*hitl.Rule{r}, tt.in, now) == r; got != tt.want {
			t.Errorf("%s: decided %v, want %v", tt.name, got, tt.want)
		}
	}
	for body, want := range map[string]string{
		`{"effect":"allow","source_agent":"*","kind":"shell","action_name":"Bash"}`: "give action_name or kind, not both",
		`{"effect":"allow","source_agent":"*","kind":"teleport"}`:                   "kind must be one of",
		`{"effect":"allow","source_agent":"*"}`:                                     "action_name is required",
	} {
		var req hitl.RuleRequest
		if err := json.Unmarshal([]byte(body), &req); err != nil {
			t.Fatal(err)
		}
		_, err := hitl.NewRule(req, admin, now)
		wantErr(t, err, hitl.ErrInvalid, want)
	}
}

// TestAlwaysAllAgents: "always, for all my agents" makes a rule on the
// action's kind, for every agent of the caller that asked.
func TestAlwaysAllAgents(t *testing.T) {
	t.Parallel()
	in := actionFrom("claude-code", "laptop-token", "Bash", `{"command":"git status"}`)
	in.Action.Kind, in.Action.Input = hitl.KindShell, hitl.ShellInput("git status", "/p")
	in.Decisions = hitl.AllDecisions()
	alice := hitl.Caller{Name: "alice", Role: hitl.RoleResponder}
	a, err := hitl.NormalizeActionAnswer(in, json.RawMessage(`{"decision":"approve","always":{"scope":"all_agents","match":{"arg":"command","prefix":"git status"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := in.AlwaysRule(a.Always, alice, now)
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != hitl.KindShell || r.ActionName != "" || r.SourceAgent != hitl.AnyAgent || r.AskedBy != "laptop-token" || r.Within == nil {
		t.Errorf("rule %+v, want on kind shell, every agent, asked by laptop-token, within alice", r)
	}
	r.CreatedAt = now.Add(-time.Minute)
	codex := actionFrom("codex", "laptop-token", "exec_command", `{"cmd":"git status"}`)
	codex.Action.Kind, codex.Action.Input = hitl.KindShell, hitl.ShellInput("git status --short", "/q")
	if hitl.DecidingRule([]*hitl.Rule{r}, codex, now) != r {
		t.Error("the rule does not decide codex's git status --short")
	}
	codex.CreatedBy = "someone-else"
	if hitl.DecidingRule([]*hitl.Rule{r}, codex, now) != nil {
		t.Error("the rule decides another caller's call")
	}
	for always, want := range map[string]string{
		`{"scope":"everywhere"}`: `always.scope must be "agent" or "all_agents"`,
	} {
		_, err := hitl.NormalizeActionAnswer(in, json.RawMessage(`{"decision":"approve","always":`+always+`}`))
		wantErr(t, err, hitl.ErrValue, want)
	}
	bad, _ := hitl.NormalizeActionAnswer(in, json.RawMessage(`{"decision":"approve","always":{"scope":"all_agents","match":{"arg":"file_path","glob":"**"}}}`))
	if _, err := in.AlwaysRule(bad.Always, alice, now); err == nil {
		t.Error("a match on a field the input has not: no error")
	}
	noKind := actionFrom("claude-code", "laptop-token", "Task", `{"prompt":"x"}`)
	noKind.Decisions = hitl.AllDecisions()
	if _, err := noKind.AlwaysRule(a.Always, alice, now); err == nil {
		t.Error("all agents for a call of no kind: no error")
	}
}
