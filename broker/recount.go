package broker

import (
	"context"
	"time"

	"github.com/hitl-sh/hitl"
)

// DefaultRecountInterval is how often the votes on pending interactions
// are counted again against who may vote now (see Recount).
const DefaultRecountInterval = time.Minute

// recountLoop counts the votes of every pending interaction with a
// voting consensus again every recountEvery, until ctx ends: a target
// removed from hitl no longer counts, so a rule waiting for them decides,
// or is found out of reach, without waiting for a vote.
func (b *Broker) recountLoop(ctx context.Context) {
	timer := time.NewTimer(b.recountEvery)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		b.recountAll(ctx)
		timer.Reset(b.recountEvery)
	}
}

// recountAll runs Recount on every pending interaction with a voting
// consensus.
func (b *Broker) recountAll(ctx context.Context) {
	// Only those with a workflow, from an index of them: the work grows
	// with the questions that vote, not with every pending one.
	f := hitl.ListFilter{Status: hitl.StatusPending, Workflow: true, Limit: hitl.MaxListLimit}
	for {
		list, next, err := b.store.ListInteractions(ctx, f)
		if err != nil {
			if ctx.Err() == nil {
				b.log.Error("recount votes: list pending interactions", "error", err)
			}
			return
		}
		for _, in := range list {
			if !in.Consensus.Voting() {
				continue
			}
			if _, err := b.Recount(ctx, in.ID); err != nil && ctx.Err() == nil {
				b.log.Error("recount votes", "interaction_id", in.ID, "error", err)
			}
		}
		if next == "" {
			return
		}
		f.Cursor = next
	}
}
