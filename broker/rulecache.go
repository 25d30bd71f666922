package broker

import (
	"context"
	"sync"
	"time"

	"github.com/hitl-sh/hitl"
)

// ruleCache keeps the rules in force, indexed (hitl.RuleIndex), at the
// rules' version it read them at. An action is decided by the rules
// cached, and they are read again only when the version changed: a rule
// made or revoked on any replica, or by another process on the same file,
// applies to the next action, and an action's cost does not grow with the
// number of rules. The version is not read before each action: the
// store checks it as it writes the action, and the rules are read again
// when that check finds it changed (Broker.decide).
type ruleCache struct {
	mu      sync.Mutex
	version int64
	index   *hitl.RuleIndex // nil until the first read
}

// expiredMargin is how long after expiring a rule is still read into the
// cache: an action asked at a time a little before the read (they are
// decided at their own creation time) still finds a rule that was in
// force then. Each rule's expiry is checked at the action's time.
const expiredMargin = time.Minute

// cached returns the index of the rules last read and their version; a
// nil index when none was read yet.
func (c *ruleCache) cached() (*hitl.RuleIndex, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.index, c.version
}

// current returns the index of the rules at the store's current version,
// and that version, reading the rules when the version changed.
func (c *ruleCache) current(ctx context.Context, store hitl.RuleStore, now time.Time) (*hitl.RuleIndex, int64, error) {
	// The version is read before the rules: rules read after it are at
	// least that version, so a change made in between is read again next
	// time, never missed.
	v, err := store.RulesVersion(ctx)
	if err != nil {
		return nil, 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.index != nil && c.version == v {
		return c.index, v, nil
	}
	var rules []*hitl.Rule
	f := hitl.RuleFilter{ActiveAt: now.Add(-expiredMargin), Limit: hitl.MaxListLimit}
	for {
		page, next, err := store.Rules(ctx, f)
		if err != nil {
			return nil, 0, err
		}
		rules = append(rules, page...)
		if next == "" {
			break
		}
		f.Cursor = next
	}
	c.index, c.version = hitl.NewRuleIndex(rules), v
	return c.index, v, nil
}
