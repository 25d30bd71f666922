package broker_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/sqlite"
)

// purgeLog is a slog.Handler that passes on the interaction counts of
// the "purged ended interactions" records.
type purgeLog struct{ purged chan int64 }

func (h purgeLog) Enabled(context.Context, slog.Level) bool { return true }
func (h purgeLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h purgeLog) WithGroup(string) slog.Handler            { return h }
func (h purgeLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "purged ended interactions" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "interactions" && a.Value.Int64() > 0 {
			h.purged <- a.Value.Int64()
		}
		return true
	})
	return nil
}

// TestRetentionPurgesPeriodically runs a broker that keeps ended
// interactions for an hour: once they ended more than an hour ago (by its
// clock), its purge deletes them with their events, and it no longer
// returns them; a pending one stays.
func TestRetentionPurgesPeriodically(t *testing.T) {
	t.Parallel()
	clk := newClock(time.Now())
	log := purgeLog{purged: make(chan int64, 16)}
	store, err := sqlite.Open(filepath.Join(t.TempDir(), "hitl.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	b := broker.New(store, &broker.Options{
		Now: clk.now, Logger: slog.New(log), Retention: time.Hour, PurgeInterval: 10 * time.Millisecond,
	})
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.Close()
		store.Close()
	})

	answered := mustCreate(t, b, approval())
	cancelled := mustCreate(t, b, approval())
	pending := mustCreate(t, b, hitl.CreateRequest{Question: "Still there?", Timeout: 7 * 24 * 3600})
	if _, err := b.Respond(person("alice"), answered.ID, json.RawMessage(`true`)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Cancel(context.Background(), cancelled.ID, ""); err != nil {
		t.Fatal(err)
	}
	// A newer event, so that the cancelled one is not the newest (a purge
	// keeps the newest event's interaction); made before the clock moves,
	// so that no purge can run while the cancelled one is the newest.
	newer := mustCreate(t, b, hitl.CreateRequest{Question: "Newer?", Timeout: 7 * 24 * 3600})
	clk.add(2 * time.Hour)

	select {
	case n := <-log.purged:
		if n != 2 {
			t.Errorf("purged %d interactions, want 2", n)
		}
	case <-time.After(time.Minute):
		t.Fatal("no purge within a minute")
	}
	for _, id := range []string{answered.ID, cancelled.ID} {
		if _, err := b.Get(context.Background(), id); hitl.ErrorCode(err) != hitl.ENOTFOUND {
			t.Errorf("Get(%s) after purge: %v, want not found", id, err)
		}
		// Answers and waits look in the broker's recent interactions
		// first: the purge cleared them there too.
		if _, err := b.Respond(person("alice"), id, json.RawMessage(`true`)); hitl.ErrorCode(err) != hitl.ENOTFOUND {
			t.Errorf("Respond(%s) after purge: %v, want not found", id, err)
		}
		if _, err := b.Wait(context.Background(), id); hitl.ErrorCode(err) != hitl.ENOTFOUND {
			t.Errorf("Wait(%s) after purge: %v, want not found", id, err)
		}
	}
	for _, id := range []string{pending.ID, newer.ID} {
		if _, err := b.Get(context.Background(), id); err != nil {
			t.Errorf("Get(%s) after purge: %v", id, err)
		}
	}
	evs, err := store.Events(context.Background(), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.InteractionID != pending.ID && ev.InteractionID != newer.ID {
			t.Errorf("event %d of %s kept, want only the pending ones' events", ev.Seq, ev.InteractionID)
		}
	}
}

// TestPurgeDryRunAndProgress counts without deleting, and reports each
// batch.
func TestPurgeDryRunAndProgress(t *testing.T) {
	t.Parallel()
	store, err := sqlite.Open(filepath.Join(t.TempDir(), "hitl.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	b := startBroker(t, store, nil)
	for range 5 {
		in := mustCreate(t, b, approval())
		if _, err := b.Cancel(context.Background(), in.ID, ""); err != nil {
			t.Fatal(err)
		}
	}
	mustCreate(t, b, approval()) // the newest event's, and pending
	ctx := context.Background()
	cutoff := time.Now().Add(time.Hour)
	var batches []int
	dry, err := broker.Purge(ctx, store, cutoff, &broker.PurgeOptions{DryRun: true, Batch: 2,
		Progress: func(p *hitl.Purged) { batches = append(batches, len(p.IDs)) }})
	if err != nil {
		t.Fatal(err)
	}
	if dry.Interactions() != 5 || dry.Rows["events"] != 10 || dry.Batches != 3 {
		t.Errorf("dry run: %+v, want 5 interactions, 10 events in 3 batches", dry)
	}
	if want := []int{2, 2, 1}; !slices.Equal(batches, want) {
		t.Errorf("batches %v, want %v", batches, want)
	}
	if n, err := b.CountInteractions(ctx, hitl.StatusCancelled); err != nil || n != 5 {
		t.Errorf("after a dry run: %d cancelled (%v), want 5", n, err)
	}
	got, err := broker.Purge(ctx, store, cutoff, &broker.PurgeOptions{Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got.Interactions() != 5 || got.Rows["events"] != 10 {
		t.Errorf("purge: %+v, want 5 interactions and 10 events", got)
	}
	if n, err := b.CountInteractions(ctx, hitl.StatusCancelled); err != nil || n != 0 {
		t.Errorf("after the purge: %d cancelled (%v), want 0", n, err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := broker.Purge(canceled, store, cutoff, nil); err == nil {
		t.Error("purge with an ended context: no error")
	}
}
