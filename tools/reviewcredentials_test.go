package tools

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
)

// TestReviewChecksCredentialsAfterAWait: a call a person decides is
// checked once more against its caller's credentials when the decision
// comes, and denied if they no longer hold; a call a rule decides as it is
// asked is not, its credentials having been checked as its request came
// in (a server's check is a store read on every hook call). Both Review
// and ReviewDeferring.
func TestReviewChecksCredentialsAfterAWait(t *testing.T) {
	t.Parallel()
	reviews := map[string]func(context.Context, hitl.Service, ToolCall) *Verdict{
		"Review": func(ctx context.Context, svc hitl.Service, call ToolCall) *Verdict {
			return Review(ctx, svc, call, nil)
		},
		"ReviewDeferring": func(ctx context.Context, svc hitl.Service, call ToolCall) *Verdict {
			return ReviewDeferring(ctx, svc, call, nil, time.Minute)
		},
	}
	for name, review := range reviews {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := startEngine(t)
			admin := hitl.WithCaller(context.Background(), hitl.Caller{Name: "root", Role: hitl.RoleAdmin})
			if _, err := b.CreateRule(admin, hitl.RuleRequest{Effect: hitl.RuleAllow, SourceAgent: ClaudeCodeAgent, ActionName: "Bash",
				Match: &hitl.RuleMatch{Arg: "command", Prefix: "git status"}}); err != nil {
				t.Fatal(err)
			}
			var checks atomic.Int32
			var holding atomic.Bool
			holding.Store(true)
			ctx := hitl.WithCredentialCheck(context.Background(), func(context.Context) bool {
				checks.Add(1)
				return holding.Load()
			}, time.Hour) // no periodic check while the tests wait

			ruled := ToolCall{Tool: "Bash", Input: json.RawMessage(`{"command":"git status"}`), ToolUseID: "toolu_rule", SessionID: "s-1"}
			if v := review(ctx, b, ruled); !v.Allow || checks.Load() != 0 {
				t.Errorf("a rule's decision: allow %v (%s), %d credential checks; want allowed, 0 checks", v.Allow, v.Reason, checks.Load())
			}

			asked := func(id string) (*Verdict, error) {
				call := bashCall
				call.ToolUseID = id
				ch := make(chan *Verdict, 1)
				go func() { ch <- review(ctx, b, call) }()
				answer(t, b, `"approve"`)
				v := verdict(t, ch)
				return v, v.Err
			}
			if v, err := asked("toolu_person"); !v.Allow || err != nil || checks.Load() != 1 {
				t.Errorf("a person's approval: allow %v (%s, %v), %d credential checks; want allowed, 1 check", v.Allow, v.Reason, err, checks.Load())
			}
			holding.Store(false) // the caller's token revoked while a person decides
			if v, err := asked("toolu_revoked"); v.Allow || !errors.Is(err, hitl.ErrCredentialsEnded) {
				t.Errorf("approved after the credentials ended: allow %v (%s, %v); want denied, ErrCredentialsEnded", v.Allow, v.Reason, err)
			}
		})
	}
}
