package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
)

// Escalation steps are rows of the NotificationStore on channel
// hitl.ChannelEscalation (one per step, its index as the round), and a
// fired step is a ChangePending that widens the targets and records it.

// escalated returns a pending interaction with two steps: a reminder
// after 10s and sre-leads added after 30s.
func escalated(t *testing.T, now time.Time) *hitl.Interaction {
	t.Helper()
	return ask(t, hitl.CreateRequest{Timeout: 600, Targets: &hitl.Targets{Users: []string{"alice"}}, Escalation: []hitl.EscalationStep{
		{After: "10s", Remind: true},
		{After: "30s", AddTargets: &hitl.Targets{Groups: []string{"sre-leads"}}, Channels: []string{hitl.ChannelEmail}},
	}}, "agent", now)
}

// stepRows returns the rows of in's escalation steps.
func stepRows(in *hitl.Interaction) []*hitl.Notification {
	var out []*hitl.Notification
	for i, s := range in.Escalation {
		out = append(out, &hitl.Notification{ID: in.ID + "/step", InteractionID: in.ID, Channel: hitl.ChannelEscalation,
			Round: i, State: hitl.NotificationScheduled, DueAt: s.Due(in.CreatedAt), CreatedAt: in.CreatedAt})
		out[i].ID += string(rune('0' + i))
	}
	return out
}

// fireStep fires step i of id at now, as the engine does.
func fireStep(t *testing.T, s hitl.Store, id string, i int, now time.Time) (*hitl.Interaction, *hitl.Event, error) {
	t.Helper()
	return s.ChangePending(t.Context(), id, now, func(in *hitl.Interaction) (*hitl.Change, error) {
		ev, err := in.ApplyEscalation(i, now)
		return &hitl.Change{Event: ev}, err
	})
}

func testEscalationSteps(t *testing.T, s NotificationStore) {
	in := create(t, s, escalated(t, base))
	if got := get(t, s, in.ID); len(got.Escalation) != 2 || got.Escalation[1].AddTargets.Groups[0] != "sre-leads" {
		t.Fatalf("escalation read back: %+v, want the two steps", got.Escalation)
	}
	if n := scheduleN(t, s, stepRows(in)...); n != 2 {
		t.Fatalf("schedule the steps: inserted %d, want 2", n)
	}
	if n := scheduleN(t, s, stepRows(in)...); n != 0 {
		t.Errorf("schedule the steps again: inserted %d, want 0", n)
	}
	due, ok, err := s.NextNotificationDue(t.Context(), hitl.ChannelEscalation)
	if err != nil || !ok || !due.Equal(at(10)) {
		t.Fatalf("NextNotificationDue: %s %v %v, want %s", due, ok, err, at(10))
	}
	if got := claimN(t, s, hitl.ChannelEscalation, at(9), at(100), 10); len(got) != 0 {
		t.Fatalf("claim before the first step is due: got %d rows", len(got))
	}
	got := claimN(t, s, hitl.ChannelEscalation, at(10), at(100), 10)
	if len(got) != 1 || got[0].Round != 0 || got[0].Interaction == nil || got[0].Interaction.Status != hitl.StatusPending {
		t.Fatalf("claim the first step: got %v, want step 0 with its pending interaction", got)
	}
	if again := claimN(t, s, hitl.ChannelEscalation, at(11), at(100), 10); len(again) != 0 {
		t.Fatalf("claim again under the lease: got %d rows, want none", len(again))
	}

	out, ev, err := fireStep(t, s, in.ID, 1, at(30))
	if err != nil || ev == nil || ev.Type != hitl.EventEscalated || ev.Seq == 0 {
		t.Fatalf("fire step 1: %+v, %v; want an escalated event", ev, err)
	}
	if !slices.Equal(out.Targets.Groups, []string{"sre-leads"}) {
		t.Errorf("fire step 1: targets %+v, want sre-leads added", out.Targets)
	}
	stored := get(t, s, in.ID)
	if !slices.Equal(stored.Targets.Users, []string{"alice"}) || !slices.Equal(stored.Targets.Groups, []string{"sre-leads"}) || !slices.Equal(stored.EscalatedSteps, []int{1}) {
		t.Errorf("read back: targets %+v, fired %v; want alice and sre-leads, step 1", stored.Targets, stored.EscalatedSteps)
	}
	sre := &hitl.Audience{User: "carol", Groups: []string{"sre-leads"}}
	if list, _, err := s.ListInteractions(t.Context(), hitl.ListFilter{VisibleTo: sre}); err != nil || len(list) != 1 {
		t.Errorf("list for an sre lead: %d, %v; want the escalated question", len(list), err)
	}
	if _, ev, err := fireStep(t, s, in.ID, 1, at(31)); err != nil || ev != nil {
		t.Errorf("fire step 1 twice: %+v, %v; want no event", ev, err)
	}

	// The interaction ends: a step claimed after it sees it ended.
	resolve(t, s, in.ID, cancel(at(40)))
	if _, _, err := fireStep(t, s, in.ID, 0, at(41)); !errors.Is(err, hitl.ErrNotPending) {
		t.Errorf("fire a step of an ended interaction: %v, want ErrNotPending", err)
	}
	late := claimN(t, s, hitl.ChannelEscalation, at(200), at(300), 10)
	if len(late) != 2 || late[0].Interaction.Status != hitl.StatusCancelled {
		t.Fatalf("claim after the end: got %d rows, want both with the cancelled interaction", len(late))
	}
}

func testEscalationUnscheduled(t *testing.T, s NotificationStore) {
	in := create(t, s, escalated(t, base))
	create(t, s, askAt(t, at(1), 600)) // no workflow: not a sweep's concern
	f := hitl.UnnotifiedFilter{Channel: hitl.ChannelEscalation, Workflow: true, Limit: 10}
	list, err := s.UnnotifiedInteractions(t.Context(), f)
	if err != nil || len(list) != 1 || len(list[0].Escalation) != 2 {
		t.Fatalf("UnnotifiedInteractions: %d, %v; want the one with its steps", len(list), err)
	}
	scheduleN(t, s, stepRows(in)...)
	if list, err := s.UnnotifiedInteractions(t.Context(), f); err != nil || len(list) != 0 {
		t.Errorf("UnnotifiedInteractions once scheduled: %d, %v; want none", len(list), err)
	}
}

// testReopenEscalation checks that steps, the steps fired and widened
// targets survive a restart.
func testReopenEscalation(t *testing.T, open func(t *testing.T) hitl.Store) {
	s1 := &opened{Store: open(t)}
	t.Cleanup(func() { s1.Close() })
	ns, ok := s1.Store.(hitl.NotificationStore)
	if !ok {
		t.Skip("the store keeps no notification rows")
	}
	in := create(t, s1, escalated(t, base))
	if _, err := ns.ScheduleNotifications(t.Context(), stepRows(in)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := fireStep(t, s1, in.ID, 0, at(10)); err != nil {
		t.Fatal(err)
	}
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := &opened{Store: open(t)}
	t.Cleanup(func() { s2.Close() })
	got := get(t, s2, in.ID)
	if len(got.Escalation) != 2 || !slices.Equal(got.EscalatedSteps, []int{0}) {
		t.Errorf("after reopen: steps %+v fired %v; want two steps, step 0 fired", got.Escalation, got.EscalatedSteps)
	}
	due, ok, err := s2.Store.(hitl.NotificationStore).NextNotificationDue(t.Context(), hitl.ChannelEscalation)
	if err != nil || !ok || !due.Equal(at(10)) {
		t.Errorf("NextNotificationDue after reopen: %s %v %v, want %s", due, ok, err, at(10))
	}
}

// reminderRow is the Slack thread reply of step i of id, due at due.
func reminderRow(id string, i int, due time.Time) *hitl.Notification {
	return &hitl.Notification{ID: fmt.Sprintf("%s/reply%d", id, i), InteractionID: id, Channel: hitl.ChannelSlackReminder,
		Round: i, State: hitl.NotificationScheduled, DueAt: due}
}

// testChangeSchedulesRows checks that the rows a change schedules (a
// fired step's deliveries) are written in its transaction: with its
// event, or not at all.
func testChangeSchedulesRows(t *testing.T, s NotificationStore) {
	in := create(t, s, escalated(t, base))
	fire := func(i int, now time.Time, fail error) (*hitl.Event, error) {
		t.Helper()
		_, ev, err := s.ChangePending(t.Context(), in.ID, now, func(in *hitl.Interaction) (*hitl.Change, error) {
			ev, err := in.ApplyEscalation(i, now)
			if err == nil {
				err = fail
			}
			return &hitl.Change{Event: ev, Schedule: []*hitl.Notification{reminderRow(in.ID, i, now)}}, err
		})
		return ev, err
	}
	errNo := errors.New("refused")
	if _, err := fire(0, at(10), errNo); !errors.Is(err, errNo) {
		t.Fatalf("a change that fails: %v, want its error", err)
	}
	if got := claimN(t, s, hitl.ChannelSlackReminder, at(100), at(200), 10); len(got) != 0 {
		t.Fatalf("after a change that failed: %d rows, want none", len(got))
	}
	ev, err := fire(0, at(10), nil)
	if err != nil || ev == nil || ev.Type != hitl.EventReminded {
		t.Fatalf("fire step 0: %+v, %v; want a reminded event", ev, err)
	}
	due, ok, err := s.NextNotificationDue(t.Context(), hitl.ChannelSlackReminder)
	if err != nil || !ok || !due.Equal(at(10)) {
		t.Fatalf("NextNotificationDue after the step: %s %v %v, want %s", due, ok, err, at(10))
	}
	// A row whose key exists is left as it is.
	if _, err := fire(0, at(20), nil); err != nil {
		t.Fatalf("fire step 0 again: %v", err)
	}
	got := claimN(t, s, hitl.ChannelSlackReminder, at(30), at(100), 10)
	if len(got) != 1 || got[0].Round != 0 || got[0].ID != in.ID+"/reply0" || got[0].Interaction == nil || !slices.Equal(got[0].Interaction.EscalatedSteps, []int{0}) {
		t.Fatalf("claim the reply: %+v, want the one row of step 0, with the step fired", got)
	}
	// An ended interaction takes no change, and no rows.
	resolve(t, s, in.ID, cancel(at(40)))
	if _, err := fire(1, at(41), nil); !errors.Is(err, hitl.ErrNotPending) {
		t.Fatalf("fire a step of an ended interaction: %v, want ErrNotPending", err)
	}
	if got := claimN(t, s, hitl.ChannelSlackReminder, at(300), at(400), 10); len(got) != 1 || got[0].Round != 0 {
		t.Errorf("rows after the end: %+v, want only step 0's (its lease ran out)", got)
	}
}
