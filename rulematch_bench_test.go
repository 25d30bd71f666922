package hitl_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
)

// BenchmarkDecidingRule decides one Bash call among n prefix rules of its
// agent (half allow, half deny, none matching but the last allow): the
// cost of parsing the command once and reading it against every rule.
func BenchmarkDecidingRule(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			rules := make([]*hitl.Rule, n)
			for i := range rules {
				effect := hitl.RuleAllow
				if i%2 == 1 {
					effect = hitl.RuleDeny
				}
				m := &hitl.RuleMatch{Arg: "command", Prefix: fmt.Sprintf("tool%d run", i)}
				if i == n-1 {
					m.Prefix, effect = "git status", hitl.RuleAllow
				}
				rules[i] = &hitl.Rule{ID: fmt.Sprint(i), Effect: effect, SourceAgent: "claude-code", ActionName: "Bash", Match: m, CreatedAt: time.Unix(int64(i), 0)}
			}
			in := &hitl.Interaction{Type: hitl.TypeAction, SourceAgent: "claude-code",
				Action: &hitl.Action{Name: "Bash", Args: json.RawMessage(`{"command":"git status --short && echo done"}`)}}
			hitl.DecidingRule(rules, in, time.Unix(int64(n+1), 0)) // parse the rules' commands once
			b.ResetTimer()
			for b.Loop() {
				hitl.DecidingRule(rules, in, time.Unix(int64(n+1), 0))
			}
		})
	}
}
