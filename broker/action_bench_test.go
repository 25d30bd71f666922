package broker_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hitl-sh/hitl"
)

// BenchmarkCreateAction measures asking an action with rules of its agent
// and name in force (each read from the store and matched on every
// create), none of which matches, so that every one is looked at and the
// action waits for a person; and with an allow rule that decides it, so
// that it is created answered.
func BenchmarkCreateAction(b *testing.B) {
	for _, n := range []int{0, 10, 100} {
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			br := benchBroker(b, "")
			ctx := context.Background()
			for i := range n {
				if _, err := br.CreateRule(ctx, hitl.RuleRequest{Effect: hitl.RuleAllow, SourceAgent: "claude-code", ActionName: "Bash",
					Match: &hitl.RuleMatch{Arg: "command", Prefix: fmt.Sprintf("tool-%d", i)}}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if in, _, err := br.Create(ctx, bash("git status")); err != nil || in.Status != hitl.StatusPending {
					b.Fatal(in.Status, err)
				}
			}
		})
	}
	b.Run("decided", func(b *testing.B) {
		br := benchBroker(b, "")
		ctx := context.Background()
		if _, err := br.CreateRule(ctx, hitl.RuleRequest{Effect: hitl.RuleAllow, SourceAgent: "claude-code", ActionName: "Bash",
			Match: &hitl.RuleMatch{Arg: "command", Prefix: "git status"}}); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if in, _, err := br.Create(ctx, bash("git status")); err != nil || in.Status != hitl.StatusAnswered {
				b.Fatal(err)
			}
		}
	})
}
