package webhook

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
)

// lookingStore counts the worker's looks at the due deliveries.
type lookingStore struct {
	Store
	claims, nexts atomic.Int64
}

func (s *lookingStore) ClaimWebhookDeliveries(ctx context.Context, now, until time.Time, limit int) ([]*hitl.WebhookDelivery, error) {
	s.claims.Add(1)
	return s.Store.ClaimWebhookDeliveries(ctx, now, until, limit)
}

func (s *lookingStore) NextWebhookDue(ctx context.Context) (time.Time, bool, error) {
	s.nexts.Add(1)
	return s.Store.NextWebhookDue(ctx)
}

// TestQuietEventsLeaveTheDueDeliveriesAlone: events that make no delivery
// row (no subscription, no callback) do not make the worker claim or ask
// for the next due time again; an event that makes a row does, and it is
// delivered.
func TestQuietEventsLeaveTheDueDeliveriesAlone(t *testing.T) {
	rc := newReceiver(t)
	rc.expect("/done", testServerSecret)
	r := startWith(t, hitltest.SQLiteDB(t), Options{ServerSecret: testServerSecret, AllowPrivate: true})
	// Swap in the counting store before the worker's first look at what
	// is due: stop the started service and start another on the wrapper.
	r.s.Close()
	looking := &lookingStore{Store: r.store}
	r.s = New(looking, r.b, &Options{ServerSecret: testServerSecret, AllowPrivate: true, Sealer: r.s.opts.Sealer})
	r.s.stepDone = func() {
		r.scanned.Store(r.s.cursor.scanned)
		select {
		case r.stepped <- struct{}{}:
		default:
		}
	}
	if err := r.s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	r.waitUntil("the first look", func() bool { return looking.nexts.Load() > 0 })
	claims, nexts := looking.claims.Load(), looking.nexts.Load()
	var last *hitl.Interaction
	for range 10 {
		last = r.ask(hitl.CreateRequest{})
		r.answer(last.ID, "true")
	}
	delivered := r.b.Delivered()
	r.waitUntil("every event is read", func() bool { return r.scanned.Load() >= delivered })
	if c, n := looking.claims.Load()-claims, looking.nexts.Load()-nexts; c != 0 || n != 0 {
		t.Errorf("20 events with no delivery made %d claims and %d next-due reads; want none", c, n)
	}
	in := r.ask(hitl.CreateRequest{CallbackURL: rc.URL + "/done"})
	r.answer(in.ID, "true")
	if g := rc.next(t); !g.verified {
		t.Errorf("the callback does not verify")
	}
	if looking.claims.Load() == claims {
		t.Errorf("the callback was sent without a claim")
	}
}

// TestCallbackCarriesTheReceipt: the callback of an approved action
// carries its receipt, which verifies for the approved args; a rejected
// one carries none.
func TestCallbackCarriesTheReceipt(t *testing.T) {
	rc := newReceiver(t)
	rc.expect("/done", testServerSecret)
	r := start(t, hitltest.SQLiteDB(t), Options{ServerSecret: testServerSecret})
	args := json.RawMessage(`{"command":"make deploy"}`)
	for _, c := range []struct {
		answer string
		signed bool
	}{{`"approve"`, true}, {`{"decision": "reject", "message": "not today"}`, false}} {
		in := r.ask(hitl.CreateRequest{Type: hitl.TypeAction, Question: "Deploy?", CallbackURL: rc.URL + "/done",
			Action: &hitl.Action{Name: "Bash", Args: args}})
		r.answer(in.ID, c.answer)
		var body hitl.Interaction
		if err := json.Unmarshal(rc.next(t).body, &body); err != nil || body.Result == nil {
			t.Fatalf("callback body: %v, %+v", err, body.Result)
		}
		if !c.signed {
			if body.Result.Receipt != "" {
				t.Errorf("a rejected action's callback carries a receipt")
			}
			continue
		}
		claims, err := r.receipts.Verify(t.Context(), body.Result.Receipt, hitl.ReceiptExpectation{Args: args, InteractionID: in.ID, Name: "Bash"})
		if err != nil || claims.InteractionID != in.ID {
			t.Errorf("the callback's receipt %q: %+v, %v; want one that verifies for the approved args", body.Result.Receipt, claims, err)
		}
	}
}
