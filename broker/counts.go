package broker

import (
	"context"

	"github.com/hitl-sh/hitl"
)

// Counts returns how many of the interactions the caller may see f
// selects (see hitl.InteractionCounts): the same interactions List
// would page through, counted in all, per agent, per type, and those
// expiring within hitl.ExpiringWindow of the broker's clock.
func (b *Broker) Counts(ctx context.Context, f hitl.ListFilter) (*hitl.InteractionCounts, error) {
	if err := hitl.CheckListFilter(f); err != nil {
		return nil, err
	}
	f.Cursor, f.Limit, f.Sort = "", 0, ""
	f, ok := hitl.Restrict(hitl.CallerFrom(ctx), f)
	if !ok {
		return &hitl.InteractionCounts{ByAgent: map[string]int{}, ByType: map[hitl.Type]int{}}, nil
	}
	return b.store.CountMatching(ctx, f, b.now().Add(hitl.ExpiringWindow))
}
