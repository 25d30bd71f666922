package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hitl-sh/hitl"
)

// TestClaimWithNothingDueDoesNotWrite: the channels' workers claim after
// every question; a claim that finds nothing due must not take a write
// transaction (it would queue on the single writer, in the commits of
// the questions and answers). One that finds work still claims it.
func TestClaimWithNothingDueDoesNotWrite(t *testing.T) {
	path := tempPath(t)
	s := open(t, path, nil)
	ctx := context.Background()
	now := time.Now()
	in, _, _, err := s.CreateInteraction(ctx, newInteraction(t))
	if err != nil {
		t.Fatal(err)
	}
	// A row due in an hour: there is a row, but none is due.
	later := &hitl.Notification{ID: uuid.NewString(), InteractionID: in.ID, Channel: hitl.ChannelPush, Recipient: "https://push.example/later",
		State: hitl.NotificationScheduled, DueAt: now.Add(time.Hour), CreatedAt: now}
	if _, err := s.ScheduleNotifications(ctx, []*hitl.Notification{later}); err != nil {
		t.Fatal(err)
	}

	before := s.WritesTaken()
	claims := map[string]func() (int, error){
		"push": func() (int, error) {
			ns, err := s.ClaimNotifications(ctx, hitl.ChannelPush, now, now.Add(time.Minute), 10)
			return len(ns), err
		},
		"email": func() (int, error) {
			ns, err := s.ClaimNotifications(ctx, hitl.ChannelEmail, now, now.Add(time.Minute), 10)
			return len(ns), err
		},
		"slack": func() (int, error) {
			ms, err := s.ClaimSlackMessages(ctx, now, now.Add(time.Minute), 10)
			return len(ms), err
		},
		"webhooks": func() (int, error) {
			ds, err := s.ClaimWebhookDeliveries(ctx, now, now.Add(time.Minute), 10)
			return len(ds), err
		},
	}
	for name, claim := range claims {
		if n, err := claim(); err != nil || n != 0 {
			t.Fatalf("%s: claimed %d, %v; want none", name, n, err)
		}
	}
	if after := s.WritesTaken(); after != before {
		t.Errorf("%d write transactions taken by claims with nothing due", after-before)
	}

	// An hour on, the row is due: it is claimed, which commits.
	ns, err := s.ClaimNotifications(ctx, hitl.ChannelPush, now.Add(time.Hour), now.Add(time.Hour+time.Minute), 10)
	if err != nil || len(ns) != 1 || ns[0].ID != later.ID {
		t.Fatalf("claim an hour on: %v, %v; want %s", ns, err, later.ID)
	}
	if after := s.WritesTaken(); after != before+1 {
		t.Errorf("%d write transactions taken by a claim that found work, want 1", after-before)
	}
}
