package broker

import (
	"context"
	"fmt"

	"github.com/hitl-sh/hitl"
)

// The event log and the store's health, as the surfaces read them: live
// streams resume from the log, readiness checks ping the store, metrics
// count what is pending. Reading the log, a caller is given only the
// events it may see (hitl.CanSeeEvent), so no surface filters them itself.

// Events returns, in order, up to limit logged events with Seq > after
// that the caller in ctx may see, each with its Interaction, and the
// sequence number of the newest event read, seen or not: the next page
// starts after it. It returns after itself when the log holds nothing
// newer. A page may hold fewer than limit events (even none) while the
// log goes on: only through == after means the end.
func (b *Broker) Events(ctx context.Context, after int64, limit int) (evs []*hitl.Event, through int64, err error) {
	caller := hitl.CallerFrom(ctx)
	all, err := b.store.Events(ctx, after, limit)
	if err != nil {
		return nil, after, fmt.Errorf("read the event log: %w", err)
	}
	through = after
	for _, ev := range all {
		through = ev.Seq
		if hitl.CanSeeEvent(caller, ev) {
			evs = append(evs, ev)
		}
	}
	return evs, through, nil
}

// LastEventSeq returns the sequence number of the newest logged event (0
// if none), committed by this process or any other sharing the store:
// where a stream resumes from, and how a client's position is checked.
func (b *Broker) LastEventSeq(ctx context.Context) (int64, error) {
	return b.store.LastEventSeq(ctx)
}

// PurgedThrough returns the highest sequence number of an event that a
// purge deleted (0 if none): a client resuming from before it may have
// missed events, and must start over from what is pending.
func (b *Broker) PurgedThrough(ctx context.Context) (int64, error) {
	return b.store.PurgedThrough(ctx)
}

// Ping reports whether the store can serve requests (readiness).
func (b *Broker) Ping(ctx context.Context) error {
	return b.store.Ping(ctx)
}

// CountInteractions counts the interactions with status, for operations
// (metrics): every interaction, so only for a caller who may see them all
// (hitl.CanSeeAll: an admin, or in-process code).
func (b *Broker) CountInteractions(ctx context.Context, status hitl.Status) (int, error) {
	if !hitl.CanSeeAll(hitl.CallerFrom(ctx)) {
		return 0, hitl.Errorf(hitl.EFORBIDDEN, "counts of every interaction are for admins")
	}
	if !status.Valid() {
		return 0, hitl.Errorf(hitl.EINVALID, "status must be pending, answered, expired or cancelled")
	}
	if groups, ok := b.pending.read(nil); ok && status == hitl.StatusPending {
		n := 0
		for _, g := range groups {
			n += g.N
		}
		return n, nil
	}
	return b.store.CountInteractions(ctx, status)
}
