package storetest

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

// WebhookStore is a store with the webhooks' tables.
type WebhookStore interface {
	hitl.Store
	hitl.WebhookStore
}

// RunWebhook runs the conformance suite of hitl.WebhookStore. newStore
// must return a new, empty store for each call and close it when the test
// ends. shared, when not nil, returns two stores over one new database
// (two processes), for the tests across replicas.
func RunWebhook(t *testing.T, newStore func(t *testing.T) WebhookStore, shared func(t *testing.T) (WebhookStore, WebhookStore)) {
	t.Helper()
	runSuite(t, []storeTest[WebhookStore]{
		{"CallbackURLRoundTrip", testWebhookCallbackURL},
		{"Subscriptions", testWebhookSubscriptions},
		{"ServerSecret", testWebhookServerSecret},
		{"EnqueueMovesCursor", testWebhookEnqueue},
		{"ClaimDueAndLease", testWebhookClaim},
		{"AttemptIsFenced", testWebhookAttemptFenced},
		{"DeleteTakesDeliveries", testWebhookDelete},
		{"PurgeTakesDeliveries", testWebhookPurge},
	}, newStore, shared, "AcrossProcesses", testWebhookAcross)
}

// subscription returns a new subscription to events.
func subscription(id string, events ...hitl.WebhookEvent) *hitl.WebhookSubscription {
	return &hitl.WebhookSubscription{ID: id, URL: "https://example.com/hooks/" + id, Events: events,
		Description: "the " + id + " hook", Secret: "v1:sealed-" + id, CreatedBy: "admin", CreatedAt: at(0)}
}

// delivery returns a pending delivery of in's event due at due.
func delivery(id string, in *hitl.Interaction, sub string, due time.Time) *hitl.WebhookDelivery {
	return &hitl.WebhookDelivery{ID: id, SubscriptionID: sub, InteractionID: in.ID, Event: hitl.WebhookCreated,
		EventSeq: 1, URL: "https://example.com/cb", State: hitl.DeliveryPending, DueAt: due, CreatedAt: at(0),
		Body: json.RawMessage(`{"id":"` + id + `"}`)}
}

// enqueue enqueues ds from the store's cursor to to, which must succeed.
func enqueue(t *testing.T, s WebhookStore, to int64, ds ...*hitl.WebhookDelivery) {
	t.Helper()
	from, err := s.WebhookCursor(t.Context())
	if err != nil {
		t.Fatalf("WebhookCursor: %v", err)
	}
	ok, err := s.EnqueueWebhookDeliveries(t.Context(), from, to, ds)
	if err != nil || !ok {
		t.Fatalf("EnqueueWebhookDeliveries(%d, %d): got %v, %v; want true", from, to, ok, err)
	}
}

// claimWebhooks claims deliveries due at now.
func claimWebhooks(t *testing.T, s WebhookStore, now, lease time.Time, limit int) []*hitl.WebhookDelivery {
	t.Helper()
	got, err := s.ClaimWebhookDeliveries(t.Context(), now, lease, limit)
	if err != nil {
		t.Fatalf("ClaimWebhookDeliveries: %v", err)
	}
	return got
}

func testWebhookCallbackURL(t *testing.T, s WebhookStore) {
	in := ask(t, hitl.CreateRequest{Timeout: 600, CallbackURL: "https://agent.example.com/done?run=7"}, "agent", base)
	got := create(t, s, in)
	if got.CallbackURL != in.CallbackURL {
		t.Errorf("created: callback_url %q, want %q", got.CallbackURL, in.CallbackURL)
	}
	resolved, _ := resolve(t, s, got.ID, hitl.Transition{Status: hitl.StatusCancelled, At: at(1), By: "agent", Via: hitl.ChannelAPI})
	if resolved.CallbackURL != in.CallbackURL || get(t, s, got.ID).CallbackURL != in.CallbackURL {
		t.Errorf("after Resolve: callback_url %q, stored %q; want %q", resolved.CallbackURL, get(t, s, got.ID).CallbackURL, in.CallbackURL)
	}
	evs, err := s.Events(t.Context(), 0, 10)
	if err != nil || len(evs) == 0 || evs[0].Interaction == nil || evs[0].Interaction.CallbackURL != in.CallbackURL {
		t.Errorf("Events: the interaction's callback_url is not read back (%v)", err)
	}
}

func testWebhookSubscriptions(t *testing.T, s WebhookStore) {
	ctx := t.Context()
	if list, err := s.Webhooks(ctx); err != nil || len(list) != 0 {
		t.Fatalf("Webhooks on an empty store: got %v, %v; want none", list, err)
	}
	a, b := subscription("wh_a", hitl.WebhookCreated), subscription("wh_b", hitl.WebhookAnswered, hitl.WebhookExpired)
	b.CreatedAt = at(1)
	for _, w := range []*hitl.WebhookSubscription{b, a} {
		if err := s.CreateWebhook(ctx, w); err != nil {
			t.Fatalf("CreateWebhook: %v", err)
		}
	}
	list, err := s.Webhooks(ctx)
	if err != nil {
		t.Fatalf("Webhooks: %v", err)
	}
	if diff := cmp.Diff([]*hitl.WebhookSubscription{a, b}, list); diff != "" {
		t.Errorf("Webhooks, oldest first (-want +got):\n%s", diff)
	}
	got, err := s.Webhook(ctx, "wh_b")
	if err != nil {
		t.Fatalf("Webhook: %v", err)
	}
	if diff := cmp.Diff(b, got); diff != "" {
		t.Errorf("Webhook (-want +got):\n%s", diff)
	}
	_, err = s.Webhook(ctx, "wh_nope")
	wantCode(t, "Webhook of an unknown id", err, hitl.ENOTFOUND)
	wantCode(t, "DeleteWebhook of an unknown id", s.DeleteWebhook(ctx, "wh_nope"), hitl.ENOTFOUND)
	if err := s.DeleteWebhook(ctx, "wh_a"); err != nil {
		t.Fatalf("DeleteWebhook: %v", err)
	}
	if list, _ := s.Webhooks(ctx); len(list) != 1 || list[0].ID != "wh_b" {
		t.Errorf("Webhooks after deleting wh_a: got %v, want only wh_b", list)
	}
}

func testWebhookServerSecret(t *testing.T, s WebhookStore) {
	ctx := t.Context()
	_, err := s.WebhookSecret(ctx)
	wantCode(t, "WebhookSecret before one is made", err, hitl.ENOTFOUND)
	got, err := s.InitWebhookSecret(ctx, "v1:first")
	if err != nil || got != "v1:first" {
		t.Fatalf("InitWebhookSecret: got %q, %v; want v1:first", got, err)
	}
	// A second replica making its own finds the first one's.
	got, err = s.InitWebhookSecret(ctx, "v1:second")
	if err != nil || got != "v1:first" {
		t.Fatalf("InitWebhookSecret again: got %q, %v; want the first, v1:first", got, err)
	}
	if got, err := s.WebhookSecret(ctx); err != nil || got != "v1:first" {
		t.Errorf("WebhookSecret: got %q, %v; want v1:first", got, err)
	}
}

func testWebhookEnqueue(t *testing.T, s WebhookStore) {
	ctx := t.Context()
	in := create(t, s, askAt(t, base, 600))
	if cur, err := s.WebhookCursor(ctx); err != nil || cur != 0 {
		t.Fatalf("WebhookCursor of a new store: got %d, %v; want 0", cur, err)
	}
	enqueue(t, s, 1, delivery("msg_1", in, "", at(0)))
	if cur, _ := s.WebhookCursor(ctx); cur != 1 {
		t.Errorf("WebhookCursor after enqueueing to 1: got %d", cur)
	}
	// A replica that read the cursor before it moved loses, and writes
	// nothing.
	ok, err := s.EnqueueWebhookDeliveries(ctx, 0, 1, []*hitl.WebhookDelivery{delivery("msg_dup", in, "", at(0))})
	if err != nil || ok {
		t.Fatalf("EnqueueWebhookDeliveries from a stale cursor: got %v, %v; want false, nil", ok, err)
	}
	list, err := s.WebhookDeliveries(ctx, hitl.DeliveryFilter{InteractionID: in.ID})
	if err != nil {
		t.Fatalf("WebhookDeliveries: %v", err)
	}
	if len(list) != 1 || list[0].ID != "msg_1" {
		t.Fatalf("WebhookDeliveries: got %d rows, want only msg_1", len(list))
	}
	want := delivery("msg_1", in, "", at(0))
	want.Body, want.History = nil, []*hitl.WebhookAttempt{}
	if diff := cmp.Diff(want, list[0]); diff != "" {
		t.Errorf("WebhookDeliveries (-want +got):\n%s", diff)
	}
	// Moving the cursor over events that make no delivery.
	enqueue(t, s, 5)
	if cur, _ := s.WebhookCursor(ctx); cur != 5 {
		t.Errorf("WebhookCursor after an empty enqueue to 5: got %d", cur)
	}
}

func testWebhookClaim(t *testing.T, s WebhookStore) {
	ctx := t.Context()
	if err := s.CreateWebhook(ctx, subscription("wh_a", hitl.WebhookCreated)); err != nil {
		t.Fatal(err)
	}
	in := create(t, s, askAt(t, base, 600))
	enqueue(t, s, 1, delivery("msg_late", in, "", at(20)), delivery("msg_early", in, "wh_a", at(10)))
	if due, ok, err := s.NextWebhookDue(ctx); err != nil || !ok || !due.Equal(at(10)) {
		t.Fatalf("NextWebhookDue: got %v, %v, %v; want %v", due, ok, err, at(10))
	}
	if got := claimWebhooks(t, s, at(9), at(69), 10); len(got) != 0 {
		t.Fatalf("claim before anything is due: got %d rows", len(got))
	}
	got := claimWebhooks(t, s, at(15), at(75), 10)
	if len(got) != 1 || got[0].ID != "msg_early" {
		t.Fatalf("claim at 15: got %d rows, want msg_early", len(got))
	}
	d := got[0]
	if d.State != hitl.DeliverySending || d.Attempts != 1 || !d.DueAt.Equal(at(75)) {
		t.Errorf("claimed: state %s, attempts %d, due %v; want sending, 1, %v", d.State, d.Attempts, d.DueAt, at(75))
	}
	if d.Secret != "v1:sealed-wh_a" || string(d.Body) != `{"id":"msg_early"}` {
		t.Errorf("claimed: secret %q, body %s; want the subscription's secret and the stored body", d.Secret, d.Body)
	}
	// Held by its lease, then claimed again when the lease runs out.
	if got := claimWebhooks(t, s, at(30), at(90), 10); len(got) != 1 || got[0].ID != "msg_late" || got[0].Secret != "" {
		t.Fatalf("claim at 30: got %v; want only msg_late, without a secret (a callback)", got)
	}
	again := claimWebhooks(t, s, at(100), at(160), 10)
	if len(again) != 2 || again[0].Attempts != 2 {
		t.Fatalf("claim after the leases ran out: got %d rows (attempts %v), want 2 with attempts 2", len(again), again)
	}
}

func testWebhookAttemptFenced(t *testing.T, s WebhookStore) {
	ctx := t.Context()
	in := create(t, s, askAt(t, base, 600))
	enqueue(t, s, 1, delivery("msg_1", in, "", at(0)))
	d := claimWebhooks(t, s, at(1), at(61), 1)[0]
	failed := hitl.WebhookAttempt{Attempt: 1, At: at(2), StatusCode: 503, Error: "503 Service Unavailable", DurationMS: 12}
	retry := *d
	retry.State, retry.DueAt = hitl.DeliveryPending, at(7)
	if ok, err := s.RecordWebhookAttempt(ctx, &retry, &failed, 0); err != nil || ok {
		t.Fatalf("RecordWebhookAttempt with a stale attempt count: got %v, %v; want false, nil", ok, err)
	}
	if ok, err := s.RecordWebhookAttempt(ctx, &retry, &failed, 1); err != nil || !ok {
		t.Fatalf("RecordWebhookAttempt: got %v, %v; want true", ok, err)
	}
	// The row is pending again: a second record of the same claim loses.
	if ok, err := s.RecordWebhookAttempt(ctx, &retry, &failed, 1); err != nil || ok {
		t.Fatalf("RecordWebhookAttempt twice: got %v, %v; want false", ok, err)
	}
	d = claimWebhooks(t, s, at(7), at(67), 1)[0]
	done := *d
	delivered := at(8)
	done.State, done.DueAt, done.DeliveredAt = hitl.DeliveryDelivered, time.Time{}, &delivered
	ok := hitl.WebhookAttempt{Attempt: 2, At: at(8), StatusCode: 204, DurationMS: 3}
	if ok, err := s.RecordWebhookAttempt(ctx, &done, &ok, 2); err != nil || !ok {
		t.Fatalf("RecordWebhookAttempt delivered: got %v, %v", ok, err)
	}
	if _, due, _ := s.NextWebhookDue(ctx); due {
		t.Errorf("NextWebhookDue: a delivered row is still due")
	}
	list, err := s.WebhookDeliveries(ctx, hitl.DeliveryFilter{InteractionID: in.ID})
	if err != nil || len(list) != 1 {
		t.Fatalf("WebhookDeliveries: got %d, %v", len(list), err)
	}
	got := list[0]
	if got.State != hitl.DeliveryDelivered || got.Attempts != 2 || got.DeliveredAt == nil || !got.DeliveredAt.Equal(delivered) {
		t.Errorf("delivered row: state %s, attempts %d, delivered_at %v", got.State, got.Attempts, got.DeliveredAt)
	}
	want := []*hitl.WebhookAttempt{
		{DeliveryID: "msg_1", Attempt: 1, At: at(2), StatusCode: 503, Error: "503 Service Unavailable", DurationMS: 12},
		{DeliveryID: "msg_1", Attempt: 2, At: at(8), StatusCode: 204, DurationMS: 3},
	}
	if diff := cmp.Diff(want, got.History); diff != "" {
		t.Errorf("History (-want +got):\n%s", diff)
	}
}

func testWebhookDelete(t *testing.T, s WebhookStore) {
	ctx := t.Context()
	if err := s.CreateWebhook(ctx, subscription("wh_a", hitl.WebhookCreated)); err != nil {
		t.Fatal(err)
	}
	in := create(t, s, askAt(t, base, 600))
	enqueue(t, s, 1, delivery("msg_sub", in, "wh_a", at(0)), delivery("msg_cb", in, "", at(0)))
	if list, _ := s.WebhookDeliveries(ctx, hitl.DeliveryFilter{SubscriptionID: "wh_a"}); len(list) != 1 || list[0].ID != "msg_sub" {
		t.Fatalf("WebhookDeliveries of wh_a: got %v, want msg_sub", list)
	}
	if err := s.DeleteWebhook(ctx, "wh_a"); err != nil {
		t.Fatal(err)
	}
	list, _ := s.WebhookDeliveries(ctx, hitl.DeliveryFilter{InteractionID: in.ID})
	if len(list) != 1 || list[0].ID != "msg_cb" {
		t.Errorf("deliveries after deleting wh_a: got %d, want only the callback's", len(list))
	}
}

func testWebhookPurge(t *testing.T, s WebhookStore) {
	ctx := t.Context()
	old := create(t, s, askAt(t, base, 600))
	resolve(t, s, old.ID, hitl.Transition{Status: hitl.StatusCancelled, At: at(1), By: "agent", Via: hitl.ChannelAPI})
	keep := create(t, s, askAt(t, at(2), 600)) // the newest event's interaction is kept
	enqueue(t, s, 3, delivery("msg_old", old, "", at(0)), delivery("msg_keep", keep, "", at(5)))
	d := claimWebhooks(t, s, at(1), at(61), 1)[0]
	done := *d
	done.State, done.DueAt = hitl.DeliveryFailed, time.Time{}
	if ok, err := s.RecordWebhookAttempt(ctx, &done, &hitl.WebhookAttempt{Attempt: 1, At: at(1), Error: "refused"}, 1); err != nil || !ok {
		t.Fatalf("RecordWebhookAttempt: %v, %v", ok, err)
	}
	got, err := s.PurgeEnded(ctx, hitl.Purge{EndedBefore: at(100)})
	if err != nil {
		t.Fatalf("PurgeEnded: %v", err)
	}
	if len(got.IDs) != 1 || got.Rows["webhook_deliveries"] != 1 || got.Rows["webhook_attempts"] != 1 {
		t.Errorf("PurgeEnded: got %v, rows %v; want the old interaction with 1 delivery and 1 attempt", got.IDs, got.Rows)
	}
	if list, _ := s.WebhookDeliveries(ctx, hitl.DeliveryFilter{InteractionID: old.ID}); len(list) != 0 {
		t.Errorf("deliveries of a purged interaction: %d left", len(list))
	}
	if list, _ := s.WebhookDeliveries(ctx, hitl.DeliveryFilter{InteractionID: keep.ID}); len(list) != 1 {
		t.Errorf("deliveries of a kept interaction: %d, want 1", len(list))
	}
}

// testWebhookAcross enqueues the same events from two processes at once
// (only one wins each step), then claims from both at once: every
// delivery is claimed exactly once.
func testWebhookAcross(t *testing.T, a, b WebhookStore) {
	const n = 20
	in := create(t, a, askAt(t, base, 600))
	var wg sync.WaitGroup
	wins := make([]int, 2)
	for i, s := range []WebhookStore{a, b} {
		wg.Go(func() {
			for seq := int64(0); seq < n; seq++ {
				d := delivery(fmt.Sprintf("msg_%d_%d", i, seq), in, "", at(0))
				ok, err := s.EnqueueWebhookDeliveries(t.Context(), seq, seq+1, []*hitl.WebhookDelivery{d})
				if err != nil {
					t.Errorf("EnqueueWebhookDeliveries: %v", err)
					return
				}
				if ok {
					wins[i]++
				}
			}
		})
	}
	wg.Wait()
	if wins[0]+wins[1] != n {
		t.Fatalf("enqueues that won: %v, want %d in all", wins, n)
	}
	claim := func(s WebhookStore) claimer {
		return func() ([]string, error) {
			got, err := s.ClaimWebhookDeliveries(t.Context(), at(1), at(61), 3)
			var ids []string
			for _, d := range got {
				ids = append(ids, d.ID)
			}
			return ids, err
		}
	}
	claimOnce(t, n, claim(a), claim(b), claim(a), claim(b))
}
