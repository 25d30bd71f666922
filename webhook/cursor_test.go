package webhook

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
)

// Events that make no delivery (no subscription, no callback) are read
// without a write: the store's cursor stays where it was until it has
// lagged for cursorFlush, and is then written in one go.
func TestQuietEventsHoldTheCursor(t *testing.T) {
	var skew atomic.Int64 // added to the webhooks' clock
	now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	r := start(t, hitltest.SQLiteDB(t), Options{ServerSecret: testServerSecret, Now: now})
	stored := func() int64 {
		seq, err := r.store.WebhookCursor(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return seq
	}
	at := stored()
	for range 3 {
		in := r.ask(hitl.CreateRequest{})
		r.answer(in.ID, "true")
	}
	horizon := r.b.Delivered()
	r.waitUntil("the events are read", func() bool { return r.scanned.Load() >= horizon })
	if got := stored(); got != at {
		t.Errorf("the store's cursor moved from %d to %d for events that made no delivery", at, got)
	}

	skew.Store(int64(cursorFlush + time.Second))
	r.ask(hitl.CreateRequest{})
	horizon = r.b.Delivered()
	r.waitUntil("the cursor is written once it has lagged", func() bool { return stored() >= horizon })
}

// A subscription gets only the events after it was made, even when the
// events before it are read again after a crash (their cursor was held in
// memory).
func TestSubscriptionMissesEarlierEventsAfterACrash(t *testing.T) {
	rc := newReceiver(t)
	db := hitltest.SQLiteDB(t)
	first := start(t, db, Options{ServerSecret: testServerSecret})
	before := first.ask(hitl.CreateRequest{})
	first.answer(before.ID, "true")
	horizon := first.b.Delivered()
	first.waitUntil("the events are read", func() bool { return first.scanned.Load() >= horizon })
	sub, err := first.s.AddWebhook(admin(t), hitl.WebhookRequest{URL: rc.URL + "/all", Events: []hitl.WebhookEvent{hitl.WebhookCreated, hitl.WebhookAnswered}})
	if err != nil {
		t.Fatalf("AddWebhook: %v", err)
	}
	rc.expect("/all", sub.Secret)
	first.stop() // the held cursor is not written

	second := start(t, db, Options{ServerSecret: testServerSecret})
	after := second.ask(hitl.CreateRequest{})
	g := rc.next(t)
	if len(second.deliveries(before.ID)) != 0 {
		t.Errorf("the events of a question asked before the subscription were delivered to it after the restart")
	}
	if ds := second.deliveries(after.ID); len(ds) != 1 || ds[0].ID != g.id {
		t.Errorf("deliveries of the question asked after the subscription: %v; want the one received, %s", ds, g.id)
	}
}

// recent holds the delivered events the worker has not read, and says
// when it does not hold them all.
func TestRecentEvents(t *testing.T) {
	var r recent
	ev := func(seq int64) *hitl.Event { return &hitl.Event{Seq: seq} }
	seqs := func(evs []*hitl.Event) []int64 {
		var out []int64
		for _, e := range evs {
			out = append(out, e.Seq)
		}
		return out
	}
	r.add(ev(11)) // delivered before begin: held, but nothing is complete yet
	if _, ok := r.since(10, 11, 10); ok {
		t.Fatal("since before begin: complete")
	}
	r.begin(10)
	for seq := int64(12); seq <= 15; seq++ {
		r.add(ev(seq))
	}
	if got, ok := r.since(10, 14, 10); !ok || fmt.Sprint(seqs(got)) != "[11 12 13 14]" {
		t.Errorf("since(10, horizon 14): %v, %v; want [11 12 13 14]", seqs(got), ok)
	}
	if got, ok := r.since(12, 15, 2); !ok || fmt.Sprint(seqs(got)) != "[13 14]" {
		t.Errorf("since(12, limit 2): %v, %v; want [13 14]", seqs(got), ok)
	}
	if _, ok := r.since(9, 15, 10); ok {
		t.Error("since(9): complete, but event 10 was never held")
	}
	r.drop(13)
	if _, ok := r.since(12, 15, 10); ok {
		t.Error("since(12) after drop(13): complete, but 13 was let go")
	}
	if got, ok := r.since(13, 15, 10); !ok || fmt.Sprint(seqs(got)) != "[14 15]" {
		t.Errorf("since(13) after drop(13): %v, %v; want [14 15]", seqs(got), ok)
	}
	// Past maxRecent, the oldest go, and the range they were in is not
	// complete any more.
	for seq := int64(16); seq < 16+maxRecent; seq++ {
		r.add(ev(seq))
	}
	if len(r.events) > maxRecent {
		t.Errorf("%d events held, want at most %d", len(r.events), maxRecent)
	}
	if _, ok := r.since(13, 1<<40, 10); ok {
		t.Error("since(13) after overflow: complete")
	}
	if got, ok := r.since(r.after, 1<<40, 1); !ok || len(got) != 1 || got[0].Seq != r.after+1 {
		t.Errorf("since(after): %v, %v; want the next event", seqs(got), ok)
	}
}
