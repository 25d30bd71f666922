package broker

import (
	"context"

	"github.com/hitl-sh/hitl"
)

// Counts returns how many of the interactions the caller may see f
// selects (see hitl.InteractionCounts): the same interactions List
// would page through, counted in all, per agent, per type, and those
// expiring within hitl.ExpiringWindow of the broker's clock. The pending
// ones, narrowed by agent and type at most, are counted from the broker's
// own counts (pendingcounts.go), for everyone and for a person who sees
// only what targets them alike, and only those expiring soon from the
// store.
func (b *Broker) Counts(ctx context.Context, f hitl.ListFilter) (*hitl.InteractionCounts, error) {
	if err := hitl.CheckListFilter(f); err != nil {
		return nil, err
	}
	f.Cursor, f.Limit, f.Sort = "", 0, ""
	f, ok := hitl.Restrict(hitl.CallerFrom(ctx), f)
	if !ok {
		return &hitl.InteractionCounts{ByAgent: map[string]int{}, ByType: map[hitl.Type]int{}}, nil
	}
	soon := b.now().Add(hitl.ExpiringWindow)
	if groups, ok := b.pending.read(f.VisibleTo); ok && kept(f) {
		counts := hitl.CountGroups(groups, f)
		due, err := b.store.CountDue(ctx, f, soon)
		if err != nil {
			return nil, err
		}
		counts.Expiring = due
		return counts, nil
	}
	return b.store.CountMatching(ctx, f, soon)
}
