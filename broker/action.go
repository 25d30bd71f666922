package broker

import (
	"context"
	"encoding/json"
	"errors"
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
// edit, the patch (a JSON array); for an answer that made a rule,
// {"rule_created":"…"}. An answer a rule gave names it as its actor,
// "rule:<id>", on channel rule.

// decide decides in, an action, by the rules in force (deny beats
// allow): a rule that decides it answers it (ruleAnswer). It returns the
// rules' version it was decided at, which the transaction that writes in
// checks (createDecided). The rules cached are used as they are, and read
// again only when they changed: at the first action, and again when that
// check found them changed. Other types are not decided.
func (b *Broker) decide(ctx context.Context, in *hitl.Interaction, again bool) (int64, error) {
	if in.Type != hitl.TypeAction {
		return 0, nil
	}
	var rules *hitl.RuleIndex
	var version int64
	if !again {
		rules, version = b.rules.cached()
	}
	if rules == nil {
		var err error
		if rules, version, err = b.rules.current(ctx, b.store, in.CreatedAt); err != nil {
			return 0, fmt.Errorf("create interaction: read rules: %w", err)
		}
	}
	if again {
		in.Status, in.Result = hitl.StatusPending, nil
	}
	if r := rules.Decide(in, in.CreatedAt); r != nil {
		ruleAnswer(in, r)
	}
	return version, nil
}

// maxRulesRaces bounds how often an action is decided again because the
// rules changed between its decision and its write.
const maxRulesRaces = 5

// createDecided writes in, an action decided by the rules at version
// (decide), checking in the write's transaction that the version still
// holds: when it does not, in is decided again by the rules as they are
// now and written at their version. Other types are written as they are.
func (b *Broker) createDecided(ctx context.Context, in *hitl.Interaction, version int64) (*hitl.Interaction, *hitl.Event, bool, error) {
	if in.Type != hitl.TypeAction {
		return b.store.CreateInteraction(ctx, in)
	}
	for range maxRulesRaces {
		got, ev, existed, err := b.store.CreateInteractionAtRulesVersion(ctx, in, version)
		if !errors.Is(err, hitl.ErrRulesChanged) {
			return got, ev, existed, err
		}
		if version, err = b.decide(ctx, in, true); err != nil {
			return nil, nil, false, err
		}
	}
	return nil, nil, false, hitl.Errorf(hitl.EUNAVAILABLE, "the rules changed %d times while this action was being asked; ask again", maxRulesRaces)
}

// ruleAnswer makes in, an action about to be created, answered by rule
// r: channel rule, responded_by "rule:<id>", result.rule_id, at its
// creation. The store creates it so, with its answered event, in one
// transaction: no reader, on any replica, ever sees it pending.
func ruleAnswer(in *hitl.Interaction, r *hitl.Rule) {
	in.Status = hitl.StatusAnswered
	in.Result = &hitl.Result{Value: r.Answer(), RespondedBy: r.Responder(), Channel: hitl.ChannelRule, RespondedAt: in.CreatedAt, RuleID: r.ID}
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
