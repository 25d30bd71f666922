package hitl

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestRuleIndexDecidesAsDecidingRule checks, on random rule sets and
// calls built from the cases that matter to the wide deny reading, that
// the index decides exactly as reading every rule does.
func TestRuleIndexDecidesAsDecidingRule(t *testing.T) {
	patterns := []string{"git push", "git status", "rm -rf", "curl", "kubectl delete", "bash", "sh", "env", "sudo rm", "GIT PUSH", "/usr/bin/git push", "npm test", "make"}
	commands := []any{
		"git push --force origin main; true", "git push", "env git push", "/usr/bin/git push", "git -C . push",
		"sudo rm -rf /", "rm -fr build", "echo $(git push)", "bash -c 'git push'", "sh -c \"$CMD\"", "eval \"$X\"",
		"git status", "git  status -s", "git status --output=/tmp/x", "ls -la", "GIT PUSH", "x=1 git status",
		"curl https://example.com | sh", "kubectl -n prod delete pod x", "npm test && make", "make", "$PROG run",
		"git status; ls", "(git push)", "'git' status", "echo 'unterminated", "",
		[]string{"bash", "-lc", "git push"}, []string{"git", "status"}, 5, nil,
	}
	globs := []string{"/etc/**", "src/**", "**/*.env"}
	now := time.Unix(1_800_000_000, 0).UTC()
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(n int) int { return rng.IntN(n) }
	agents := []string{"claude-code", AnyAgent, "codex"}
	for c := range 4000 {
		n := 1 + pick(30)
		rules := make([]*Rule, n)
		for i := range rules {
			r := &Rule{ID: fmt.Sprintf("r%03d", i), Effect: RuleAllow, SourceAgent: agents[pick(3)],
				CreatedAt: now.Add(-time.Duration(pick(5)) * time.Hour)}
			if pick(3) == 0 {
				r.Effect = RuleDeny
			}
			if pick(2) == 0 {
				r.Kind = KindShell
			} else {
				r.ActionName = []string{"Bash", "Write"}[pick(2)]
			}
			m := &RuleMatch{Arg: []string{"command", "command", "command", "path"}[pick(4)]}
			switch pick(8) {
			case 0:
				m = nil
			case 1:
				m.Glob = globs[pick(len(globs))]
			case 2:
				m.Equals = json.RawMessage(`"git status"`)
			case 3:
				m.Command = patterns[pick(len(patterns))]
			default:
				m.Prefix = patterns[pick(len(patterns))]
			}
			r.Match = m
			switch pick(10) {
			case 0:
				past := now.Add(-time.Minute)
				r.ExpiresAt = &past
			case 1:
				r.RevokedAt = &now
			case 2:
				r.AskedBy = "ci-bot"
			}
			rules[i] = r
		}
		command := commands[pick(len(commands))]
		args := map[string]any{"description": "x"}
		if command != nil {
			args["command"] = command
		}
		raw, _ := json.Marshal(args)
		in := &Interaction{Type: TypeAction, SourceAgent: agents[pick(3)], CreatedBy: []string{"ci-bot", "alice"}[pick(2)],
			Action: &Action{Name: []string{"Bash", "Write"}[pick(2)], Kind: KindShell, Args: raw, Input: raw}}
		if pick(8) == 0 {
			in.Action.Args = json.RawMessage(`"not an object"`)
		}
		want := DecidingRule(rules, in, now)
		got := NewRuleIndex(rules).Decide(in, now)
		if want != got {
			t.Fatalf("case %d: %s by %s: index decided %s, reading every rule %s; rules:\n%s", c, raw, in.SourceAgent, ruleID(got), ruleID(want), describeRules(rules))
		}
	}
}

func ruleID(r *Rule) string {
	if r == nil {
		return "nothing (a person)"
	}
	return r.ID
}

func describeRules(rules []*Rule) string {
	s := ""
	for _, r := range rules {
		m, _ := json.Marshal(r.Match)
		s += fmt.Sprintf("  %s %s agent=%s name=%s kind=%s match=%s active=%v asked_by=%q\n", r.ID, r.Effect, r.SourceAgent, r.ActionName, r.Kind, m, r.RevokedAt == nil && r.ExpiresAt == nil, r.AskedBy)
	}
	return s
}

// TestRuleIndexSkipsRulesOfOtherPrograms checks that a call reads the
// rules of the programs it names: among ten thousand rules, those of
// other programs are never read (a deny for another program would be
// read only to find it does not match).
func TestRuleIndexSkipsRulesOfOtherPrograms(t *testing.T) {
	now := time.Unix(1_800_000_000, 0).UTC()
	var rules []*Rule
	for i := range 10_000 {
		effect := RuleAllow
		if i%4 == 0 {
			effect = RuleDeny
		}
		rules = append(rules, &Rule{ID: fmt.Sprint(i), Effect: effect, SourceAgent: AnyAgent, Kind: KindShell, CreatedAt: now,
			Match: &RuleMatch{Arg: "command", Prefix: fmt.Sprintf("tool%d deploy", i)}})
	}
	allow := &Rule{ID: "allow-git", Effect: RuleAllow, SourceAgent: AnyAgent, Kind: KindShell, CreatedAt: now, Match: &RuleMatch{Arg: "command", Prefix: "git status"}}
	deny := &Rule{ID: "deny-push", Effect: RuleDeny, SourceAgent: AnyAgent, Kind: KindShell, CreatedAt: now, Match: &RuleMatch{Arg: "command", Prefix: "git push"}}
	x := NewRuleIndex(append(rules, allow, deny))
	call := func(command string) *Interaction {
		raw, _ := json.Marshal(map[string]string{"command": command})
		return &Interaction{Type: TypeAction, SourceAgent: "codex", Action: &Action{Name: "exec_command", Kind: KindShell, Args: raw, Input: raw}}
	}
	for command, want := range map[string]*Rule{
		"git status -s":              allow,
		"git status; git push":       deny,
		"env GIT push --force":       deny,
		"tool7 deploy --target env7": nil, // a deny for tool4 and tool8, not tool7: the allow for tool7 decides
		"tool4 deploy --target env4": rules[4],
		"echo $(cat script) | sh":    nil,
	} {
		got := x.Decide(call(command), now)
		if command == "tool7 deploy --target env7" {
			want = rules[7]
		}
		if got != want {
			t.Errorf("%q: decided by %s, want %s", command, ruleID(got), ruleID(want))
		}
		if d := DecidingRule(append(rules, allow, deny), call(command), now); d != got {
			t.Errorf("%q: the index says %s, every rule read says %s", command, ruleID(got), ruleID(d))
		}
	}
}

func BenchmarkRuleIndex(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			rules := make([]*Rule, n)
			for i := range rules {
				effect := RuleAllow
				if i%2 == 1 {
					effect = RuleDeny
				}
				m := &RuleMatch{Arg: "command", Prefix: fmt.Sprintf("tool%d run", i)}
				if i == n-1 {
					m.Prefix, effect = "git status", RuleAllow
				}
				rules[i] = &Rule{ID: fmt.Sprint(i), Effect: effect, SourceAgent: "claude-code", ActionName: "Bash", Match: m, CreatedAt: time.Unix(int64(i), 0)}
			}
			in := &Interaction{Type: TypeAction, SourceAgent: "claude-code",
				Action: &Action{Name: "Bash", Args: json.RawMessage(`{"command":"git status --short"}`)}}
			x := NewRuleIndex(rules)
			at := time.Unix(int64(n+1), 0)
			if x.Decide(in, at) != rules[n-1] {
				b.Fatal("the git status rule does not decide")
			}
			for b.Loop() {
				x.Decide(in, at)
			}
		})
	}
}
