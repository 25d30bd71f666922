package hitl

import (
	"context"
	"errors"
	"time"
)

// RuleStore keeps rules. Every change appends its event (rule_created,
// rule_revoked) and changes the rules' version in the same transaction;
// every action is decided by the rules at a version that the transaction
// writing it checks still holds (CreateInteractionAtRulesVersion), so
// every replica applies a new rule at once.
type RuleStore interface {
	// CreateRule inserts r and appends its rule_created event (actor
	// r.CreatedBy, channel via, interaction r.InteractionID, detail r.ID)
	// in one transaction, and returns the rule as stored. An empty r.ID
	// gets a UUIDv7, a zero CreatedAt the store's clock; times are kept to
	// the millisecond. ECONFLICT when the ID exists.
	CreateRule(ctx context.Context, r *Rule, via string) (*Rule, *Event, error)

	// Rule returns one rule, or an ENOTFOUND error.
	Rule(ctx context.Context, id string) (*Rule, error)

	// Rules returns rules matching f, oldest first, and the cursor of the
	// next page ("" when there is none).
	Rules(ctx context.Context, f RuleFilter) ([]*Rule, string, error)

	// RevokeRule marks the rule revoked by by at at and appends its
	// rule_revoked event (no interaction, detail the rule's ID), in one
	// transaction. A rule revoked already is returned as it is, with a
	// nil event. ENOTFOUND when there is no such rule.
	RevokeRule(ctx context.Context, id, by, via string, at time.Time) (*Rule, *Event, error)

	// ActiveRules returns the rules of sourceAgent (or of every agent,
	// AnyAgent) for the action named actionName, and those for its kind
	// (none when kind is ""), that are active at now (neither revoked nor
	// expired), oldest first.
	ActiveRules(ctx context.Context, sourceAgent, actionName, kind string, now time.Time) ([]*Rule, error)

	// RulesVersion returns the rules' version: a number that changes, in
	// the same transaction, with every change to the rules (made,
	// revoked, deleted), by this process or another. Rules read after
	// reading it are at least that version.
	RulesVersion(ctx context.Context) (int64, error)

	// CreateInteractionAtRulesVersion is CreateInteraction in a
	// transaction that first reads the rules' version and, when it is not
	// version, writes nothing and returns ErrRulesChanged. An action
	// decided by the rules of a version is so written only while that
	// version holds, without reading the version before each action: a
	// rule made or revoked since, on any replica or by another process,
	// makes the create fail, and the action is decided again. An existing
	// idempotency key is looked up only once the version has held.
	CreateInteractionAtRulesVersion(ctx context.Context, in *Interaction, version int64) (got *Interaction, ev *Event, existed bool, err error)
}

// RuleFilter selects rules to list.
type RuleFilter struct {
	// ActiveAt, when set, keeps the rules active then: neither revoked
	// nor expired.
	ActiveAt    time.Time
	CreatedBy   string // "" for any
	SourceAgent string // "" for any
	ActionName  string // "" for any
	Limit       int    // 1..MaxListLimit; 0 means DefaultListLimit
	Cursor      string // from a previous page
}

// ErrRulesChanged is CreateInteractionAtRulesVersion's error when the
// rules' version is no longer the one given: nothing was written.
var ErrRulesChanged = errors.New("the rules changed since the action was decided")
