package webhook

import (
	"context"
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
