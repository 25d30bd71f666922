package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/hitl-sh/hitl"
)

// Actions. An action is answered like any interaction, with three
// additions: a rule in force for its agent and name decides it when it is
// created, without a person (deny beats allow); an edit records the JSON
// Patch of its arguments (result.args_diff, and the answered event's
// detail); and an answer "with always" makes a rule, in the same
// transaction as the answer.
//
// The answered event's detail says what happened beyond the value: for an
// edit, the patch (a JSON array); for an answer a rule gave,
// {"rule_id":"…"}; for an answer that made a rule, {"rule_created":"…"}.

// decidingRule returns the rule that decides the action in now, or nil
// (also for every other type). Rules are read from the store on every
// action, so one made on another replica applies at once.
func (b *Broker) decidingRule(ctx context.Context, in *hitl.Interaction) (*hitl.Rule, error) {
	if in.Type != hitl.TypeAction {
		return nil, nil
	}
	rules, err := b.store.ActiveRules(ctx, in.SourceAgent, in.Action.Name, in.CreatedAt)
	if err != nil {
		return nil, fmt.Errorf("create interaction: read rules: %w", err)
	}
	return hitl.DecidingRule(rules, in.SourceAgent, in.Action, in.CreatedAt), nil
}

// decideByRule answers the action in, just created (its created event
// ev not yet streamed), as rule r says: channel rule, responded_by
// "rule:<id>", result.rule_id. The created event goes out carrying the
// answered interaction, so live streams, which skip a question that is
// already over, never show it; the answered event follows. If the answer
// cannot be recorded, the action stays pending for a person, and that is
// logged.
func (b *Broker) decideByRule(ctx context.Context, in *hitl.Interaction, ev *hitl.Event, r *hitl.Rule) *hitl.Interaction {
	detail, _ := json.Marshal(map[string]string{"rule_id": r.ID})
	out, answered, err := b.store.Resolve(ctx, in.ID, hitl.Transition{
		Status: hitl.StatusAnswered, Value: r.Answer(), By: r.Responder(), Via: hitl.ChannelRule,
		At: in.CreatedAt, RuleID: r.ID, Detail: string(detail), From: in,
	})
	if err != nil {
		b.log.Error("answer an action by rule; it waits for a person", "interaction_id", in.ID, "rule_id", r.ID, "error", err)
		b.recent.put(ev)
		b.feed.publish(ev)
		b.expiry.scheduled(in.Deadline)
		return in
	}
	ev.Interaction = out
	b.recent.put(ev)
	b.feed.publish(ev)
	b.resolved(answered)
	b.log.Info("interaction answered by rule", "interaction_id", in.ID, "rule_id", r.ID, "effect", string(r.Effect))
	return out
}

// answerTransition validates a person's answer to in and returns the
// transition that records it: for an action, with its args_diff and the
// rule an "always" makes.
func answerTransition(in *hitl.Interaction, value json.RawMessage, caller hitl.Caller, now time.Time) (hitl.Transition, error) {
	t := hitl.Transition{Status: hitl.StatusAnswered, By: caller.Name, Via: caller.Channel, At: now, From: in}
	if in.Type != hitl.TypeAction {
		v, err := hitl.NormalizeAnswer(in, value)
		t.Value = v
		return t, err
	}
	a, err := hitl.NormalizeActionAnswer(in, value)
	if err != nil {
		return t, err
	}
	t.Value, t.ArgsDiff = a.Value, a.ArgsDiff
	if a.ArgsDiff != nil {
		t.Detail = string(a.ArgsDiff)
	}
	if a.Always != nil {
		r, err := in.AlwaysRule(a.Always, caller, now)
		if err != nil {
			return t, err
		}
		id, err := uuid.NewV7()
		if err != nil {
			return t, fmt.Errorf("respond: mint rule id: %w", err)
		}
		r.ID = id.String()
		detail, _ := json.Marshal(map[string]string{"rule_created": r.ID})
		t.Rule, t.Detail = r, string(detail)
	}
	return t, nil
}

// normalizedValue returns the canonical value of an answer to in, as it is
// recorded: for an action, without the rule an "always" asks for (which
// only the first answer makes).
func normalizedValue(in *hitl.Interaction, value json.RawMessage) (json.RawMessage, error) {
	if in.Type != hitl.TypeAction {
		return hitl.NormalizeAnswer(in, value)
	}
	a, err := hitl.NormalizeActionAnswer(in, value)
	if err != nil {
		return nil, err
	}
	return a.Value, nil
}

// defaultTransition returns the transition that answers in with its
// default response at the deadline: for an action, with its args_diff.
func defaultTransition(in *hitl.Interaction, at time.Time) hitl.Transition {
	t := hitl.Transition{Status: hitl.StatusAnswered, Value: in.DefaultResponse, Via: hitl.ChannelTimeout, At: at, Reason: "timeout", TimedOut: true, From: in}
	if in.Type == hitl.TypeAction {
		// Normalised when the interaction was made, so it is valid.
		if a, err := hitl.NormalizeActionAnswer(in, in.DefaultResponse); err == nil && a.ArgsDiff != nil {
			t.ArgsDiff, t.Detail = a.ArgsDiff, string(a.ArgsDiff)
		}
	}
	return t
}
