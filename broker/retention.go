package broker

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hitl-sh/hitl"
)

// DefaultPurgeInterval is how often a broker with a retention purges.
const DefaultPurgeInterval = time.Hour

// PurgeOptions configure Purge; the zero value (or nil) means defaults.
type PurgeOptions struct {
	// DryRun finds and counts what would go, and deletes nothing.
	DryRun bool
	// Batch is the most interactions deleted in one transaction; 0 means
	// hitl.DefaultPurgeLimit.
	Batch int
	// Progress, when set, is called after each batch.
	Progress func(*hitl.Purged)
}

// PurgeTotal is what a purge deleted (or, dry, would delete).
type PurgeTotal struct {
	// Rows counts the rows by table, as hitl.Purged.Rows does.
	Rows map[string]int
	// Batches is how many batches it took.
	Batches int
	// Took is how long it took, the pauses between batches included.
	Took time.Duration
}

// Interactions returns how many interactions went.
func (t *PurgeTotal) Interactions() int { return t.Rows["interactions"] }

// LogAttrs returns the totals as log attributes: the time taken, then one
// count per table, "interactions" first.
func (t *PurgeTotal) LogAttrs() []any {
	attrs := []any{"took", t.Took.Round(time.Millisecond), "interactions", t.Interactions()}
	for _, table := range slices.Sorted(maps.Keys(t.Rows)) {
		if table != "interactions" {
			attrs = append(attrs, table, t.Rows[table])
		}
	}
	return attrs
}

// Purge deletes every interaction of store that ended (answered, expired
// or cancelled) before endedBefore, with its events and the other rows
// that belong to it, in batches (see hitl.Store's PurgeEnded). After each
// batch it waits as long as the batch took, so that a server's writes
// take turns with it: on SQLite, whose one writer commits every answer,
// a purge holds the writer at most half of the time, one short
// transaction at a time. It returns what went before ctx ended or a batch
// failed, with the error.
func Purge(ctx context.Context, store hitl.Store, endedBefore time.Time, opts *PurgeOptions) (*PurgeTotal, error) {
	if opts == nil {
		opts = &PurgeOptions{}
	}
	start := time.Now()
	total := &PurgeTotal{Rows: map[string]int{"interactions": 0}}
	p := hitl.Purge{EndedBefore: endedBefore, Limit: opts.Batch, DryRun: opts.DryRun}
	for {
		batchStart := time.Now()
		got, err := store.PurgeEnded(ctx, p)
		if err != nil {
			total.Took = time.Since(start)
			return total, fmt.Errorf("purge interactions that ended before %s: %w", endedBefore.Format(time.RFC3339), err)
		}
		total.Batches++
		for table, n := range got.Rows {
			total.Rows[table] += n
		}
		if opts.Progress != nil {
			opts.Progress(got)
		}
		if got.Next == "" {
			total.Took = time.Since(start)
			return total, nil
		}
		p.After = got.Next
		if !p.DryRun {
			if err := pause(ctx, time.Since(batchStart)); err != nil {
				total.Took = time.Since(start)
				return total, err
			}
		}
	}
}

// pause waits for d or until ctx ends, and then returns ctx's error.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retain purges what ended more than b.retention ago, at once and then
// every b.purgeEvery, until ctx ends (the broker closes).
func (b *Broker) retain(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		b.purgeOnce(ctx)
		timer.Reset(b.purgeEvery)
	}
}

// purgeOnce runs one purge and logs what went. Interactions purged are
// forgotten by the recent cache too, so that this broker no longer
// returns them.
func (b *Broker) purgeOnce(ctx context.Context) {
	before := b.now().Add(-b.retention)
	total, err := Purge(ctx, b.store, before, &PurgeOptions{
		Progress: func(p *hitl.Purged) { b.recent.forget(p.IDs) },
	})
	attrs := append([]any{"ended_before", before.UTC().Format(time.RFC3339)}, total.LogAttrs()...)
	switch {
	case err != nil && ctx.Err() != nil:
		b.log.Info("purge interrupted by shutdown", attrs...)
	case err != nil:
		b.log.Error("purge ended interactions", append(attrs, "error", err)...)
	case total.Interactions() > 0:
		b.log.Info("purged ended interactions", attrs...)
	default:
		b.log.Debug("purged ended interactions", attrs...)
	}
}
