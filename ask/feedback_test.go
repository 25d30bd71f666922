package ask_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/ask"
)

// TestOrchestratorMapping checks what the human_feedback contract's
// helpers ask, on both ways to the engine: the id is the idempotency key,
// the details the context, the session and workflow go with the
// question, and it waits ten minutes.
func TestOrchestratorMapping(t *testing.T) {
	for _, e := range newEnvs(t) {
		t.Run(e.name, func(t *testing.T) {
			o := ask.NewOrchestrator(e.agent)
			o.SourceAgent = "planner"
			ctx := context.Background()
			check := func(in *hitl.Interaction, typ hitl.Type, key string) {
				t.Helper()
				got := map[string]any{"type": in.Type, "key": in.IdempotencyKey, "context": in.Context,
					"session": in.SessionID, "workflow": in.Metadata["workflow_id"], "timeout": in.Timeout, "agent": in.SourceAgent}
				want := map[string]any{"type": typ, "key": key, "context": "Plan v2", "session": "s-1",
					"workflow": "wf-9", "timeout": ask.DefaultFeedbackTimeout.Seconds(), "agent": "planner"}
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("question asked (-want +got):\n%s", d)
				}
			}

			review := async(func() ([2]any, error) {
				ok, text, err := o.RequestHumanFeedback(ctx, "approval_1", "Approve the plan?", "Plan v2", "s-1", "wf-9")
				return [2]any{ok, text}, err
			})
			check(e.answer(t, `"no, split step 3"`), hitl.TypeFreeText, "approval_1")
			if r := receive(t, review); r.err != nil || r.v != [2]any{false, "no, split step 3"} {
				t.Errorf("RequestHumanFeedback: %v, %v; want not approved with the text", r.v, r.err)
			}

			yesNo := async(func() (bool, error) {
				return o.RequestYesNoFeedback(ctx, "yesno_1", "Proceed?", "Go", "Stop", "Plan v2", "s-1", "wf-9")
			})
			in := e.waiting(t)
			check(in, hitl.TypeApproval, "yesno_1")
			if labels := []string{in.Options[0].Label, in.Options[1].Label}; labels[0] != "Go" || labels[1] != "Stop" {
				t.Errorf("labels %q, want Go and Stop", labels)
			}
			e.answer(t, `"Go"`)
			if r := receive(t, yesNo); r.err != nil || !r.v {
				t.Errorf("RequestYesNoFeedback: %v, %v; want true", r.v, r.err)
			}

			choice := async(func() (string, error) {
				return o.RequestMultipleChoiceFeedback(ctx, "choice_1", "Where?", []string{"EU West", "US East"}, "Plan v2", "s-1", "wf-9")
			})
			check(e.answer(t, `"us_east"`), hitl.TypeSingleChoice, "choice_1")
			if r := receive(t, choice); r.err != nil || r.v != "US East" {
				t.Errorf("RequestMultipleChoiceFeedback: %q, %v; want the text US East", r.v, r.err)
			}

			// Asked again with its id, a question already answered gives
			// the same answer at once.
			again, err := o.RequestMultipleChoiceFeedback(ctx, "choice_1", "Where?", []string{"EU West", "US East"}, "Plan v2", "s-1", "wf-9")
			if err != nil || again != "US East" {
				t.Errorf("asked again with its id: %q, %v; want US East", again, err)
			}
		})
	}
}

func TestOrchestratorUnanswered(t *testing.T) {
	for _, e := range newEnvs(t) {
		t.Run(e.name, func(t *testing.T) {
			o := &ask.Orchestrator{Service: e.agent}
			done := async(func() (string, error) {
				return o.RequestMultipleChoiceFeedback(context.Background(), "", "Where?", []string{"A", "B"}, "", "", "")
			})
			in := e.waiting(t)
			if in.Metadata != nil || in.IdempotencyKey == "" {
				t.Errorf("metadata %v, key %q; want none, and a random key", in.Metadata, in.IdempotencyKey)
			}
			if _, err := e.person.Cancel(context.Background(), in.ID, "not needed"); err != nil {
				t.Fatal(err)
			}
			if r := receive(t, done); !errors.Is(r.err, hitl.ErrCancelled) || r.v != "" {
				t.Errorf("cancelled: %q, %v; want hitl.ErrCancelled", r.v, r.err)
			}
		})
	}
}
