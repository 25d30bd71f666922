package broker

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/hitl-sh/hitl"
)

// Rules, managed through the engine so that every channel gets the same
// authorization (roles.go's CanMakeRules, CanSeeRule, RestrictRules):
// admins make rules of any scope (an agent's, or "*" for every agent) and
// see and revoke every rule; anyone else sees and revokes the rules they
// made by answering with "always". A rule the caller may not see is not
// found, as an interaction is.

// CreateRule makes a rule from req, for an admin (or in-process code), and
// appends its rule_created event (of no interaction).
func (b *Broker) CreateRule(ctx context.Context, req hitl.RuleRequest) (*hitl.Rule, error) {
	caller := hitl.CallerFrom(ctx)
	if err := hitl.CanMakeRules(caller); err != nil {
		return nil, err
	}
	r, err := hitl.NewRule(req, caller, b.now())
	if err != nil {
		return nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, fmt.Errorf("create rule: mint id: %w", err)
	}
	r.ID = id.String()
	out, ev, err := b.store.CreateRule(ctx, r, caller.Channel)
	if err != nil {
		return nil, err
	}
	b.feed.publish(ev)
	b.log.Info("rule created", "rule_id", out.ID, "effect", string(out.Effect), "source_agent", out.SourceAgent,
		"action", out.ActionName, "by", caller.Name, "channel", caller.Channel)
	return out, nil
}

// Rules returns a page of the rules the caller may see, oldest first.
func (b *Broker) Rules(ctx context.Context, f hitl.RuleFilter) ([]*hitl.Rule, string, error) {
	if f.Limit < 0 || f.Limit > hitl.MaxListLimit {
		return nil, "", hitl.Errorf(hitl.EINVALID, "limit must be between 1 and %d", hitl.MaxListLimit)
	}
	f, ok := hitl.RestrictRules(hitl.CallerFrom(ctx), f)
	if !ok {
		return []*hitl.Rule{}, "", nil
	}
	return b.store.Rules(ctx, f)
}

// Rule returns one rule, if the caller may see it.
func (b *Broker) Rule(ctx context.Context, id string) (*hitl.Rule, error) {
	r, err := b.store.Rule(ctx, id)
	if err != nil {
		return nil, err
	}
	if !hitl.CanSeeRule(hitl.CallerFrom(ctx), r) {
		return nil, hitl.Errorf(hitl.ENOTFOUND, "rule %q not found", id)
	}
	return r, nil
}

// RevokeRule revokes a rule, for its maker or an admin, and appends its
// rule_revoked event. The rule is kept, for the audit trail; revoking it
// again returns it unchanged.
func (b *Broker) RevokeRule(ctx context.Context, id string) (*hitl.Rule, error) {
	if _, err := b.Rule(ctx, id); err != nil {
		return nil, err
	}
	caller := hitl.CallerFrom(ctx)
	out, ev, err := b.store.RevokeRule(ctx, id, caller.Name, caller.Channel, b.now())
	if err != nil {
		return nil, err
	}
	if ev != nil {
		b.feed.publish(ev)
		b.log.Info("rule revoked", "rule_id", id, "by", caller.Name, "channel", caller.Channel)
	}
	return out, nil
}
