package webpush

import (
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/internal/hitltest"
)

// TestNothingWrittenWithoutSubscribers: while nobody has subscribed, a
// question costs no push row (nor a commit); once someone has, a
// question is scheduled for them, and one older than maxPushAge is not.
func TestNothingWrittenWithoutSubscribers(t *testing.T) {
	store := hitltest.OpenStore(t, hitltest.SQLiteDB(t), nil)
	defer store.Close()
	s := New(broker.New(store, nil), store, nil)
	ask := func(q string, at time.Time) *hitl.Interaction {
		in, err := hitl.NewInteraction(hitl.CreateRequest{Question: q, Timeout: 3600}, hitl.Caller{Name: "agent", Channel: hitl.ChannelAPI}, at)
		if err != nil {
			t.Fatal(err)
		}
		created, _, _, err := store.CreateInteraction(t.Context(), in)
		if err != nil {
			t.Fatal(err)
		}
		return created
	}
	unscheduled := func() int {
		list, err := store.UnnotifiedInteractions(t.Context(), hitl.UnnotifiedFilter{Channel: hitl.ChannelPush})
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}

	fresh := ask("Anyone?", time.Now())
	if wrote, err := s.schedule(t.Context(), []*hitl.Interaction{fresh}, false); err != nil || wrote {
		t.Fatalf("schedule with nobody subscribed: wrote %v, %v; want nothing written", wrote, err)
	}
	if n := unscheduled(); n != 1 {
		t.Fatalf("after scheduling with nobody subscribed, %d questions without a push row; want 1 (nothing written)", n)
	}

	if err := store.SavePushSubscription(t.Context(), &hitl.PushSubscription{Endpoint: "https://push.example/alice",
		User: "alice", P256DH: "key", Auth: "auth", Untargeted: true, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	old := ask("Still waiting?", time.Now().Add(-maxPushAge-time.Minute))
	if wrote, err := s.schedule(t.Context(), []*hitl.Interaction{fresh, old}, false); err != nil || !wrote {
		t.Fatalf("schedule once someone subscribed: wrote %v, %v; want rows written", wrote, err)
	}
	if n := unscheduled(); n != 0 {
		t.Errorf("%d questions without a push row once someone subscribed; want none", n)
	}
	due, ok, err := store.NextNotificationDue(t.Context(), hitl.ChannelPush)
	if err != nil || !ok || due.IsZero() {
		t.Errorf("nothing due on push (%v, %v): the fresh question should be", ok, err)
	}
	claimed, err := store.ClaimNotifications(t.Context(), hitl.ChannelPush, time.Now().Add(time.Second), time.Now().Add(time.Minute), 10)
	if err != nil || len(claimed) != 1 || claimed[0].InteractionID != fresh.ID {
		t.Errorf("due push rows: %d, %v; want the fresh question's only (the old one is skipped)", len(claimed), err)
	}
}
