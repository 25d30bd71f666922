package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

// NotificationStore is a store with the email and Web Push tables.
type NotificationStore interface {
	hitl.Store
	hitl.NotificationStore
	hitl.PushStore
}

// RunNotifications runs the conformance suite of hitl.NotificationStore
// and hitl.PushStore. newStore must return a new, empty store for each
// call and close it when the test ends. shared, when not nil, returns two
// stores over one new database (two processes), for the claim test across
// replicas.
func RunNotifications(t *testing.T, newStore func(t *testing.T) NotificationStore, shared func(t *testing.T) (NotificationStore, NotificationStore)) {
	t.Helper()
	runSuite(t, []storeTest[NotificationStore]{
		{"ChannelSettings", testChannelSettings},
		{"ScheduleOnce", testNotificationScheduleOnce},
		{"Unnotified", testNotificationUnnotified},
		{"ClaimDueAndLease", testNotificationClaimDueAndLease},
		{"UpdateIsFenced", testNotificationUpdateIsFenced},
		{"UseOnce", testNotificationUseOnce},
		{"PushSubscriptions", testPushSubscriptions},
		{"Purge", testNotificationPurge},
		{"EscalationSteps", testEscalationSteps},
		{"EscalationUnscheduled", testEscalationUnscheduled},
		{"ChangeSchedulesRows", testChangeSchedulesRows},
	}, newStore, shared, "ClaimAcrossProcesses", testNotificationClaimAcross)
}

// mail is a scheduled email row for in and recipient, due at due.
func mail(in *hitl.Interaction, recipient string, due time.Time) *hitl.Notification {
	return &hitl.Notification{
		ID: in.ID + "/" + recipient, InteractionID: in.ID, Channel: hitl.ChannelEmail,
		Recipient: recipient, Responder: "user-" + recipient, State: hitl.NotificationScheduled,
		DueAt: due, CreatedAt: in.CreatedAt,
	}
}

func scheduleN(t *testing.T, s NotificationStore, ns ...*hitl.Notification) int {
	t.Helper()
	n, err := s.ScheduleNotifications(t.Context(), ns)
	if err != nil {
		t.Fatalf("ScheduleNotifications: %v", err)
	}
	return n
}

func claimN(t *testing.T, s NotificationStore, channel string, now, lease time.Time, limit int) []*hitl.Notification {
	t.Helper()
	ns, err := s.ClaimNotifications(t.Context(), channel, now, lease, limit)
	if err != nil {
		t.Fatalf("ClaimNotifications: %v", err)
	}
	return ns
}

func notification(t *testing.T, s NotificationStore, id string) *hitl.Notification {
	t.Helper()
	n, err := s.Notification(t.Context(), id)
	if err != nil {
		t.Fatalf("Notification(%s): %v", id, err)
	}
	return n
}

// bare is a Notification without its interaction, for comparisons.
func bare(n *hitl.Notification) hitl.Notification {
	c := *n
	c.Interaction = nil
	return c
}

func testChannelSettings(t *testing.T, s NotificationStore) {
	_, err := s.ChannelSettings(t.Context(), hitl.ChannelEmail)
	wantCode(t, "ChannelSettings before any save", err, hitl.ENOTFOUND)
	got, err := s.InitChannelSettings(t.Context(), hitl.ChannelEmail, []byte(`{"a":1}`))
	if err != nil || string(got) != `{"a":1}` {
		t.Fatalf("InitChannelSettings: got %s, %v; want {\"a\":1}", got, err)
	}
	// A second replica's init keeps the first one's settings.
	got, err = s.InitChannelSettings(t.Context(), hitl.ChannelEmail, []byte(`{"a":2}`))
	if err != nil || string(got) != `{"a":1}` {
		t.Errorf("InitChannelSettings again: got %s, %v; want the first one's", got, err)
	}
	if err := s.SaveChannelSettings(t.Context(), hitl.ChannelEmail, []byte(`{"b":3}`)); err != nil {
		t.Fatalf("SaveChannelSettings: %v", err)
	}
	if got, err = s.ChannelSettings(t.Context(), hitl.ChannelEmail); err != nil || string(got) != `{"b":3}` {
		t.Errorf("ChannelSettings after saving: got %s, %v; want {\"b\":3}", got, err)
	}
	_, err = s.ChannelSettings(t.Context(), hitl.ChannelPush)
	wantCode(t, "ChannelSettings of another channel", err, hitl.ENOTFOUND)
}

func testNotificationScheduleOnce(t *testing.T, s NotificationStore) {
	in := create(t, s, askAt(t, base, 600))
	a := mail(in, "a@example.com", at(120))
	if got := scheduleN(t, s, a, mail(in, "b@example.com", at(120))); got != 2 {
		t.Fatalf("ScheduleNotifications: inserted %d, want 2", got)
	}
	// A second replica seeing the same created event schedules nothing.
	again := mail(in, "a@example.com", at(5))
	again.ID = "other-id"
	if got := scheduleN(t, s, again); got != 0 {
		t.Errorf("ScheduleNotifications again: inserted %d, want 0", got)
	}
	// A reminder is another round.
	reminder := mail(in, "a@example.com", at(300))
	reminder.ID, reminder.Round = "reminder", 1
	if got := scheduleN(t, s, reminder); got != 1 {
		t.Errorf("ScheduleNotifications of round 1: inserted %d, want 1", got)
	}
	got := notification(t, s, a.ID)
	if diff := cmp.Diff(bare(a), bare(got)); diff != "" {
		t.Errorf("Notification (-want +got):\n%s", diff)
	}
	if got.Interaction == nil || got.Interaction.ID != in.ID {
		t.Errorf("Notification.Interaction: got %v, want interaction %s", got.Interaction, in.ID)
	}
	_, err := s.Notification(t.Context(), "nope")
	wantCode(t, "Notification of an unknown id", err, hitl.ENOTFOUND)
	due, ok, err := s.NextNotificationDue(t.Context(), hitl.ChannelEmail)
	if err != nil || !ok || !due.Equal(at(120)) {
		t.Errorf("NextNotificationDue: got %v, %v, %v; want %v, true, nil", due, ok, err, at(120))
	}
	if _, ok, err := s.NextNotificationDue(t.Context(), hitl.ChannelPush); err != nil || ok {
		t.Errorf("NextNotificationDue of push: got ok %v, %v; want nothing due", ok, err)
	}
}

func testNotificationUnnotified(t *testing.T, s NotificationStore) {
	a := create(t, s, askAt(t, at(1), 600))
	b := create(t, s, askAt(t, at(2), 600))
	c := create(t, s, askAt(t, at(3), 600))
	d := create(t, s, askAt(t, at(0), 600))
	resolve(t, s, c.ID, answer(`"x"`, at(4)))
	nobody := mail(b, "", time.Time{})
	nobody.State = hitl.NotificationSkipped
	scheduleN(t, s, nobody)
	list, err := s.UnnotifiedInteractions(t.Context(), hitl.UnnotifiedFilter{Channel: hitl.ChannelEmail, Limit: 10})
	if err != nil {
		t.Fatalf("UnnotifiedInteractions: %v", err)
	}
	if diff := cmp.Diff([]string{d.ID, a.ID}, ids(list)); diff != "" {
		t.Errorf("UnnotifiedInteractions: pending without an email row, oldest first (-want +got):\n%s", diff)
	}
	list, err = s.UnnotifiedInteractions(t.Context(), hitl.UnnotifiedFilter{Channel: hitl.ChannelPush, Limit: 10})
	if err != nil || len(list) != 3 {
		t.Errorf("UnnotifiedInteractions(push): got %d, %v; want 3 (email rows do not count)", len(list), err)
	}
	// A sweep pages on after the last interaction it read, whether or not
	// it scheduled it.
	var swept []string
	f := hitl.UnnotifiedFilter{Channel: hitl.ChannelPush, Limit: 2}
	for {
		page, err := s.UnnotifiedInteractions(t.Context(), f)
		if err != nil {
			t.Fatalf("UnnotifiedInteractions(push, after %v): %v", f.After, err)
		}
		swept = append(swept, ids(page)...)
		if len(page) < f.Limit {
			break
		}
		f.After = page[len(page)-1]
	}
	if diff := cmp.Diff([]string{d.ID, a.ID, b.ID}, swept); diff != "" {
		t.Errorf("a sweep in pages of 2 (-want +got):\n%s", diff)
	}
}

func testNotificationClaimDueAndLease(t *testing.T, s NotificationStore) {
	in := create(t, s, askAt(t, base, 600))
	early, late := mail(in, "a@example.com", at(10)), mail(in, "b@example.com", at(20))
	push := mail(in, "carol", at(5))
	push.Channel, push.ID = hitl.ChannelPush, "push-row"
	scheduleN(t, s, early, late, push)

	if got := claimN(t, s, hitl.ChannelEmail, at(9), at(69), 10); len(got) != 0 {
		t.Fatalf("claim before anything is due: got %d rows, want 0", len(got))
	}
	got := claimN(t, s, hitl.ChannelEmail, at(15), at(75), 10)
	if len(got) != 1 || got[0].ID != early.ID {
		t.Fatalf("claim at 15: got %v, want the early row only", got)
	}
	c := got[0]
	if c.State != hitl.NotificationSending || !c.DueAt.Equal(at(75)) || c.Attempts != 1 || c.Interaction == nil || c.Interaction.ID != in.ID {
		t.Errorf("claimed row: state %s due %v attempts %d interaction %v; want sending, %v, 1, with its interaction",
			c.State, c.DueAt, c.Attempts, c.Interaction, at(75))
	}
	// Held: not claimed again until the lease runs out.
	if got := claimN(t, s, hitl.ChannelEmail, at(30), at(90), 10); len(got) != 1 || got[0].ID != late.ID {
		t.Fatalf("claim at 30: got %v, want only the late row", got)
	}
	got = claimN(t, s, hitl.ChannelEmail, at(76), at(136), 10)
	if len(got) != 1 || got[0].ID != early.ID || got[0].Attempts != 2 {
		t.Errorf("claim after the lease: got %v, want the early row again with 2 attempts", got)
	}
	if got := claimN(t, s, hitl.ChannelPush, at(100), at(160), 10); len(got) != 1 || got[0].ID != push.ID {
		t.Errorf("claim of push: got %v, want the push row", got)
	}
}

func testNotificationUpdateIsFenced(t *testing.T, s NotificationStore) {
	in := create(t, s, askAt(t, base, 600))
	n := mail(in, "a@example.com", at(10))
	scheduleN(t, s, n)
	c := claimN(t, s, hitl.ChannelEmail, at(10), at(70), 1)[0]
	stale := claimN(t, s, hitl.ChannelEmail, at(71), at(131), 1)[0] // the lease ran out; another took it
	sent := *c
	sent.State, sent.DueAt, sent.Attempts = hitl.NotificationSent, time.Time{}, 0
	if ok, err := s.UpdateNotification(t.Context(), &sent, hitl.NotificationSending, c.Attempts); err != nil || ok {
		t.Errorf("UpdateNotification with an old claim: got %v, %v; want false", ok, err)
	}
	if ok, err := s.UpdateNotification(t.Context(), &sent, hitl.NotificationSending, stale.Attempts); err != nil || !ok {
		t.Errorf("UpdateNotification with the current claim: got %v, %v; want true", ok, err)
	}
	got := notification(t, s, n.ID)
	if got.State != hitl.NotificationSent || !got.DueAt.IsZero() {
		t.Errorf("after the update: state %s due %v; want sent, no due time", got.State, got.DueAt)
	}
	if _, ok, _ := s.NextNotificationDue(t.Context(), hitl.ChannelEmail); ok {
		t.Errorf("NextNotificationDue after sending: something is still due")
	}
}

func testNotificationUseOnce(t *testing.T, s NotificationStore) {
	in := create(t, s, askAt(t, base, 600))
	n := mail(in, "a@example.com", at(10))
	scheduleN(t, s, n)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		wins int
	)
	for range 8 {
		wg.Go(func() {
			ok, err := s.UseNotification(t.Context(), n.ID, at(20))
			if err != nil {
				t.Errorf("UseNotification: %v", err)
			}
			if ok {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if wins != 1 {
		t.Errorf("UseNotification eight times at once: %d succeeded, want 1", wins)
	}
	if got := notification(t, s, n.ID); !got.UsedAt.Equal(at(20)) {
		t.Errorf("UsedAt: got %v, want %v", got.UsedAt, at(20))
	}
}

func testPushSubscriptions(t *testing.T, s NotificationStore) {
	a := &hitl.PushSubscription{Endpoint: "https://push.example/a", User: "alice", P256DH: "key-a", Auth: "auth-a", CreatedAt: at(1)}
	b := &hitl.PushSubscription{Endpoint: "https://push.example/b", User: "bob", P256DH: "key-b", Auth: "auth-b", Untargeted: true, CreatedAt: at(2)}
	for _, p := range []*hitl.PushSubscription{a, b} {
		if err := s.SavePushSubscription(t.Context(), p); err != nil {
			t.Fatalf("SavePushSubscription: %v", err)
		}
	}
	list, err := s.PushSubscriptions(t.Context(), "")
	if err != nil {
		t.Fatalf("PushSubscriptions: %v", err)
	}
	if diff := cmp.Diff([]*hitl.PushSubscription{a, b}, list); diff != "" {
		t.Errorf("PushSubscriptions (-want +got):\n%s", diff)
	}
	// The same browser subscribing again (new keys) replaces its row.
	a2 := *a
	a2.P256DH, a2.Untargeted, a2.CreatedAt = "key-a2", true, at(3)
	if err := s.SavePushSubscription(t.Context(), &a2); err != nil {
		t.Fatalf("SavePushSubscription again: %v", err)
	}
	list, err = s.PushSubscriptions(t.Context(), "alice")
	if err != nil || len(list) != 1 || list[0].P256DH != "key-a2" || !list[0].Untargeted {
		t.Errorf("PushSubscriptions(alice): got %v, %v; want the replaced subscription", list, err)
	}
	if ok, err := s.DeletePushSubscription(t.Context(), "bob", a.Endpoint); err != nil || ok {
		t.Errorf("DeletePushSubscription of another person's: got %v, %v; want false", ok, err)
	}
	if ok, err := s.DeletePushSubscription(t.Context(), "", a.Endpoint); err != nil || !ok {
		t.Errorf("DeletePushSubscription: got %v, %v; want true", ok, err)
	}
	if list, _ := s.PushSubscriptions(t.Context(), "alice"); len(list) != 0 {
		t.Errorf("PushSubscriptions(alice) after deleting: got %d, want 0", len(list))
	}
}

func testNotificationPurge(t *testing.T, s NotificationStore) {
	in := create(t, s, askAt(t, base, 600))
	other := create(t, s, askAt(t, base, 600))
	scheduleN(t, s, mail(in, "a@example.com", at(10)))
	resolve(t, s, in.ID, answer(`"x"`, at(4)))
	resolve(t, s, other.ID, answer(`"x"`, at(5))) // holds the newest event, which is kept
	got := purge(t, s, hitl.Purge{EndedBefore: at(100)})
	if got.Rows["notifications"] != 1 {
		t.Errorf("purge: Rows[notifications] = %d, want 1 (all: %v)", got.Rows["notifications"], got.Rows)
	}
	_, err := s.Notification(t.Context(), in.ID+"/a@example.com")
	wantCode(t, "Notification after its interaction was purged", err, hitl.ENOTFOUND)
}

func testNotificationClaimAcross(t *testing.T, a, b NotificationStore) {
	const n = 24
	in := create(t, a, askAt(t, base, 600))
	var ns []*hitl.Notification
	for i := range n {
		ns = append(ns, mail(in, fmt.Sprintf("p%d@example.com", i), at(i%3)))
	}
	scheduleN(t, a, ns...)
	claim := func(s NotificationStore) claimer {
		return func() ([]string, error) {
			got, err := s.ClaimNotifications(t.Context(), hitl.ChannelEmail, at(10), at(100), 2)
			var ids []string
			for _, m := range got {
				ids = append(ids, m.ID)
			}
			return ids, err
		}
	}
	claimOnce(t, n, claim(a), claim(b), claim(a), claim(b))
}
