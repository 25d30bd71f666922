package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

// SlackStore is a store with the Slack channel's tables.
type SlackStore interface {
	hitl.Store
	hitl.SlackStore
}

// RunSlack runs the conformance suite of hitl.SlackStore. newStore must
// return a new, empty store for each call and close it when the test ends.
// shared, when not nil, returns two stores over one new database (two
// processes), for the claim test across replicas.
func RunSlack(t *testing.T, newStore func(t *testing.T) SlackStore, shared func(t *testing.T) (SlackStore, SlackStore)) {
	t.Helper()
	runSuite(t, []storeTest[SlackStore]{
		{"NotifyRoundTrip", testSlackNotifyRoundTrip},
		{"Config", testSlackConfig},
		{"ScheduleOnce", testSlackScheduleOnce},
		{"Unscheduled", testSlackUnscheduled},
		{"ClaimDueAndLease", testSlackClaimDueAndLease},
		{"ClaimConcurrent", testSlackClaimConcurrent},
		{"UpdateIsFenced", testSlackUpdateIsFenced},
		{"End", testSlackEnd},
		{"Actions", testSlackActions},
		{"SeenEvent", testSlackSeenEvent},
	}, newStore, shared, "ClaimAcrossProcesses", testSlackClaimAcross)
}

// scheduled is a scheduled row for in, due at due.
func scheduled(in *hitl.Interaction, due time.Time) *hitl.SlackMessage {
	return &hitl.SlackMessage{InteractionID: in.ID, State: hitl.SlackScheduled, DueAt: due, CreatedAt: in.CreatedAt}
}

func schedule(t *testing.T, s SlackStore, ms ...*hitl.SlackMessage) int {
	t.Helper()
	n, err := s.ScheduleSlackMessages(t.Context(), ms)
	if err != nil {
		t.Fatalf("ScheduleSlackMessages: %v", err)
	}
	return n
}

func slackMessage(t *testing.T, s SlackStore, id string) *hitl.SlackMessage {
	t.Helper()
	m, err := s.SlackMessage(t.Context(), id)
	if err != nil {
		t.Fatalf("SlackMessage(%s): %v", id, err)
	}
	return m
}

func claim(t *testing.T, s SlackStore, now, lease time.Time, limit int) []*hitl.SlackMessage {
	t.Helper()
	ms, err := s.ClaimSlackMessages(t.Context(), now, lease, limit)
	if err != nil {
		t.Fatalf("ClaimSlackMessages: %v", err)
	}
	return ms
}

// row is a SlackMessage without its interaction, for comparisons.
func row(m *hitl.SlackMessage) hitl.SlackMessage {
	c := *m
	c.Interaction = nil
	return c
}

func testSlackNotifyRoundTrip(t *testing.T, s SlackStore) {
	d := 0
	want := &hitl.Notify{Slack: &hitl.SlackNotify{DelaySeconds: &d, ChannelID: "C0123"}}
	in := create(t, s, ask(t, hitl.CreateRequest{Notify: want}, "agent", base))
	off := create(t, s, ask(t, hitl.CreateRequest{Notify: &hitl.Notify{Slack: &hitl.SlackNotify{Off: true}}}, "agent", base))
	plain := create(t, s, ask(t, hitl.CreateRequest{}, "agent", base))
	for _, tt := range []struct {
		id   string
		want *hitl.Notify
	}{{in.ID, want}, {off.ID, &hitl.Notify{Slack: &hitl.SlackNotify{Off: true}}}, {plain.ID, nil}} {
		if diff := cmp.Diff(tt.want, get(t, s, tt.id).Notify); diff != "" {
			t.Errorf("Notify of %s read back (-want +got):\n%s", tt.id, diff)
		}
	}
	evs := events(t, s)
	if diff := cmp.Diff(want, evs[0].Interaction.Notify); diff != "" {
		t.Errorf("Notify in the event log (-want +got):\n%s", diff)
	}
}

func testSlackConfig(t *testing.T, s SlackStore) {
	_, err := s.SlackConfig(t.Context())
	wantCode(t, "SlackConfig before any save", err, hitl.ENOTFOUND)
	c := &hitl.SlackConfig{
		Enabled: true, ChannelID: "C0123", DelaySeconds: 0, Mention: "here", UnmappedUsers: "none",
		BotToken: "sealed-bot", AppToken: "sealed-app", SigningSecret: "sealed-secret", UpdatedAt: base,
	}
	if err := s.SaveSlackConfig(t.Context(), c); err != nil {
		t.Fatalf("SaveSlackConfig: %v", err)
	}
	got, err := s.SlackConfig(t.Context())
	if err != nil {
		t.Fatalf("SlackConfig: %v", err)
	}
	if diff := cmp.Diff(c, got); diff != "" {
		t.Errorf("SlackConfig (-want +got):\n%s", diff)
	}
	c2 := &hitl.SlackConfig{DelaySeconds: 120, Mention: "none", UnmappedUsers: "untargeted", UpdatedAt: at(1)}
	if err := s.SaveSlackConfig(t.Context(), c2); err != nil {
		t.Fatalf("SaveSlackConfig again: %v", err)
	}
	got, err = s.SlackConfig(t.Context())
	if err != nil {
		t.Fatalf("SlackConfig: %v", err)
	}
	if diff := cmp.Diff(c2, got); diff != "" {
		t.Errorf("SlackConfig after replacing (-want +got):\n%s", diff)
	}
}

func testSlackScheduleOnce(t *testing.T, s SlackStore) {
	in := create(t, s, askAt(t, base, 600))
	m := scheduled(in, at(120))
	m.ChannelID = "C0999"
	if got := schedule(t, s, m); got != 1 {
		t.Fatalf("ScheduleSlackMessages: inserted %d, want 1", got)
	}
	// A second replica seeing the same created event schedules nothing.
	if got := schedule(t, s, scheduled(in, at(5))); got != 0 {
		t.Errorf("ScheduleSlackMessages again: inserted %d, want 0", got)
	}
	got := slackMessage(t, s, in.ID)
	if diff := cmp.Diff(row(m), row(got)); diff != "" {
		t.Errorf("SlackMessage (-want +got):\n%s", diff)
	}
	if got.Interaction == nil || got.Interaction.ID != in.ID {
		t.Errorf("SlackMessage.Interaction: got %v, want interaction %s", got.Interaction, in.ID)
	}
	_, err := s.SlackMessage(t.Context(), "nope")
	wantCode(t, "SlackMessage of an unknown interaction", err, hitl.ENOTFOUND)
	_, err = s.SlackMessageByThread(t.Context(), "C0999", "")
	wantCode(t, "SlackMessageByThread with no ts", err, hitl.ENOTFOUND)
	due, ok, err := s.NextSlackDue(t.Context())
	if err != nil || !ok || !due.Equal(at(120)) {
		t.Errorf("NextSlackDue: got %v, %v, %v; want %v, true, nil", due, ok, err, at(120))
	}
}

func testSlackUnscheduled(t *testing.T, s SlackStore) {
	a := create(t, s, askAt(t, at(1), 600))
	b := create(t, s, askAt(t, at(2), 600))
	c := create(t, s, askAt(t, at(3), 600))
	d := create(t, s, askAt(t, at(0), 600))
	resolve(t, s, c.ID, answer(`"x"`, at(4)))
	schedule(t, s, scheduled(b, at(100)))
	list, err := s.UnscheduledSlackInteractions(t.Context(), 10)
	if err != nil {
		t.Fatalf("UnscheduledSlackInteractions: %v", err)
	}
	if diff := cmp.Diff([]string{d.ID, a.ID}, ids(list)); diff != "" {
		t.Errorf("UnscheduledSlackInteractions: pending without a row, oldest first (-want +got):\n%s", diff)
	}
	list, err = s.UnscheduledSlackInteractions(t.Context(), 1)
	if err != nil || len(list) != 1 {
		t.Errorf("UnscheduledSlackInteractions(limit 1): got %d, %v; want 1", len(list), err)
	}
}

func testSlackClaimDueAndLease(t *testing.T, s SlackStore) {
	early := create(t, s, askAt(t, base, 600))
	late := create(t, s, askAt(t, base, 600))
	schedule(t, s, scheduled(early, at(10)), scheduled(late, at(20)))

	if got := claim(t, s, at(9), at(69), 10); len(got) != 0 {
		t.Fatalf("claim before anything is due: got %d rows, want 0", len(got))
	}
	got := claim(t, s, at(10), at(70), 10)
	if len(got) != 1 || got[0].InteractionID != early.ID {
		t.Fatalf("claim at the first due time: got %v, want only %s", got, early.ID)
	}
	want := hitl.SlackMessage{InteractionID: early.ID, State: hitl.SlackPosting, DueAt: at(70), Attempts: 1, CreatedAt: early.CreatedAt}
	if diff := cmp.Diff(want, row(got[0])); diff != "" {
		t.Errorf("claimed row (-want +got):\n%s", diff)
	}
	if got[0].Interaction == nil || got[0].Interaction.ID != early.ID || got[0].Interaction.Status != hitl.StatusPending {
		t.Errorf("claimed row's interaction: got %+v, want the pending interaction", got[0].Interaction)
	}
	// The lease holds the row until it runs out.
	next, ok, err := s.NextSlackDue(t.Context())
	if err != nil || !ok || !next.Equal(at(20)) {
		t.Errorf("NextSlackDue with a lease until 70 and a row due at 20: got %v, %v, %v; want %v", next, ok, err, at(20))
	}
	got = claim(t, s, at(69), at(129), 10)
	if len(got) != 1 || got[0].InteractionID != late.ID {
		t.Fatalf("claim at 69: got %v, want only %s (the other is leased)", got, late.ID)
	}
	// A lease that ran out (its holder died) is claimed again.
	got = claim(t, s, at(70), at(130), 10)
	if len(got) != 1 || got[0].InteractionID != early.ID || got[0].Attempts != 2 || got[0].State != hitl.SlackPosting {
		t.Fatalf("claim after the lease: got %+v, want %s again with 2 attempts", got, early.ID)
	}
	// Ending rows are claimed for the update.
	m := row(got[0])
	m.State, m.DueAt, m.Attempts, m.ChannelID, m.TS = hitl.SlackEnding, at(100), 0, "C1", "1.2"
	if ok, err := s.UpdateSlackMessage(t.Context(), &m, hitl.SlackPosting, 2); err != nil || !ok {
		t.Fatalf("UpdateSlackMessage: %v, %v", ok, err)
	}
	got = claim(t, s, at(100), at(160), 10) // the other row's lease runs to 129
	if len(got) != 1 || got[0].State != hitl.SlackUpdating || got[0].Attempts != 1 || !got[0].DueAt.Equal(at(160)) {
		t.Fatalf("claim of an ending row: got %v, want it alone, updating, 1 attempt, due %v", got, at(160))
	}
}

func testSlackClaimConcurrent(t *testing.T, s SlackStore) {
	const n = 24
	var ms []*hitl.SlackMessage
	for i := range n {
		in := create(t, s, askAt(t, base, 600))
		ms = append(ms, scheduled(in, at(i%3)))
	}
	schedule(t, s, ms...)
	claimAll(t, []SlackStore{s, s, s, s}, n)
}

// claimAll claims from stores concurrently until nothing is due, and checks
// that each of the n rows was claimed exactly once.
func claimAll(t *testing.T, stores []SlackStore, n int) {
	t.Helper()
	var claimers []claimer
	for _, s := range stores {
		claimers = append(claimers, func() ([]string, error) {
			got, err := s.ClaimSlackMessages(t.Context(), at(10), at(100), 2)
			var ids []string
			for _, m := range got {
				ids = append(ids, m.InteractionID)
			}
			return ids, err
		})
	}
	claimOnce(t, n, claimers...)
}

func testSlackClaimAcross(t *testing.T, a, b SlackStore) {
	const n = 20
	var ms []*hitl.SlackMessage
	for range n {
		in := create(t, a, askAt(t, base, 600))
		ms = append(ms, scheduled(in, at(1)))
	}
	schedule(t, b, ms...)
	claimAll(t, []SlackStore{a, b, a, b}, n)
}

func testSlackUpdateIsFenced(t *testing.T, s SlackStore) {
	in := create(t, s, askAt(t, base, 600))
	schedule(t, s, scheduled(in, at(1)))
	got := claim(t, s, at(1), at(61), 1)
	if len(got) != 1 {
		t.Fatalf("claim: got %d rows, want 1", len(got))
	}
	posted := hitl.SlackMessage{InteractionID: in.ID, State: hitl.SlackPosted, ChannelID: "C0123", TS: "1700000000.000100", CreatedAt: in.CreatedAt}
	// A holder whose lease was taken over (attempts moved on) loses.
	if ok, err := s.UpdateSlackMessage(t.Context(), &posted, hitl.SlackPosting, 0); err != nil || ok {
		t.Fatalf("UpdateSlackMessage with a stale attempt count: got %v, %v; want false, nil", ok, err)
	}
	if ok, err := s.UpdateSlackMessage(t.Context(), &posted, hitl.SlackScheduled, 1); err != nil || ok {
		t.Fatalf("UpdateSlackMessage from the wrong state: got %v, %v; want false, nil", ok, err)
	}
	if ok, err := s.UpdateSlackMessage(t.Context(), &posted, hitl.SlackPosting, 1); err != nil || !ok {
		t.Fatalf("UpdateSlackMessage: got %v, %v; want true, nil", ok, err)
	}
	byThread, err := s.SlackMessageByThread(t.Context(), "C0123", "1700000000.000100")
	if err != nil {
		t.Fatalf("SlackMessageByThread: %v", err)
	}
	if diff := cmp.Diff(posted, row(byThread)); diff != "" {
		t.Errorf("SlackMessageByThread (-want +got):\n%s", diff)
	}
	_, err = s.SlackMessageByThread(t.Context(), "C9999", "1700000000.000100")
	wantCode(t, "SlackMessageByThread in another channel", err, hitl.ENOTFOUND)
	if _, ok, err := s.NextSlackDue(t.Context()); err != nil || ok {
		t.Errorf("NextSlackDue with only a posted row: got ok %v, %v; want nothing due", ok, err)
	}
}

func testSlackEnd(t *testing.T, s SlackStore) {
	pendingSched := create(t, s, askAt(t, base, 600))
	endedSched := create(t, s, askAt(t, base, 600))
	pendingPosted := create(t, s, askAt(t, base, 600))
	endedPosted := create(t, s, askAt(t, base, 600))
	otherEnded := create(t, s, askAt(t, base, 600))
	schedule(t, s, scheduled(pendingSched, at(50)), scheduled(endedSched, at(50)),
		scheduled(pendingPosted, at(1)), scheduled(endedPosted, at(1)), scheduled(otherEnded, at(50)))
	for _, m := range claim(t, s, at(1), at(61), 10) {
		p := row(m)
		p.State, p.DueAt, p.ChannelID, p.TS = hitl.SlackPosted, time.Time{}, "C1", m.InteractionID
		if ok, err := s.UpdateSlackMessage(t.Context(), &p, hitl.SlackPosting, m.Attempts); err != nil || !ok {
			t.Fatalf("UpdateSlackMessage: %v, %v", ok, err)
		}
	}
	resolve(t, s, endedSched.ID, answer(`"x"`, at(2)))
	resolve(t, s, endedPosted.ID, cancel(at(2)))
	resolve(t, s, otherEnded.ID, cancel(at(2)))

	n, err := s.EndSlackMessages(t.Context(), endedPosted.ID, at(3))
	if err != nil || n != 1 {
		t.Fatalf("EndSlackMessages(one): got %d, %v; want 1", n, err)
	}
	if got := slackMessage(t, s, otherEnded.ID).State; got != hitl.SlackScheduled {
		t.Errorf("a row of another interaction: got %s, want it untouched (scheduled)", got)
	}
	n, err = s.EndSlackMessages(t.Context(), "", at(4))
	if err != nil || n != 0 {
		t.Fatalf("EndSlackMessages(all): got %d, %v; want 0 more ending", n, err)
	}
	for _, tt := range []struct {
		id    string
		state hitl.SlackState
		due   time.Time
	}{
		{pendingSched.ID, hitl.SlackScheduled, at(50)},
		{endedSched.ID, hitl.SlackSkipped, time.Time{}},
		{pendingPosted.ID, hitl.SlackPosted, time.Time{}},
		{endedPosted.ID, hitl.SlackEnding, at(3)},
		{otherEnded.ID, hitl.SlackSkipped, time.Time{}},
	} {
		m := slackMessage(t, s, tt.id)
		if m.State != tt.state || !m.DueAt.Equal(tt.due) {
			t.Errorf("row %s: got %s due %v, want %s due %v", tt.id, m.State, m.DueAt, tt.state, tt.due)
		}
	}
}

func testSlackActions(t *testing.T, s SlackStore) {
	in := create(t, s, ask(t, hitl.CreateRequest{Type: hitl.TypeApproval}, "agent", base))
	as := []*hitl.SlackAction{
		{Token: "tok-approve", InteractionID: in.ID, Kind: "option", OptionKey: "approve", CreatedAt: base},
		{Token: "tok-open", InteractionID: in.ID, Kind: "open", CreatedAt: base},
	}
	if err := s.AddSlackActions(t.Context(), as); err != nil {
		t.Fatalf("AddSlackActions: %v", err)
	}
	for _, want := range as {
		got, err := s.SlackAction(t.Context(), want.Token)
		if err != nil {
			t.Fatalf("SlackAction(%s): %v", want.Token, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("SlackAction (-want +got):\n%s", diff)
		}
	}
	_, err := s.SlackAction(t.Context(), "tok-unknown")
	wantCode(t, "SlackAction(unknown)", err, hitl.ENOTFOUND)
}

func testSlackSeenEvent(t *testing.T, s SlackStore) {
	seen := func(id string, now time.Time) bool {
		t.Helper()
		fresh, err := s.SeenSlackEvent(t.Context(), id, now, now.Add(-time.Hour))
		if err != nil {
			t.Fatalf("SeenSlackEvent: %v", err)
		}
		return fresh
	}
	if !seen("Ev1", base) {
		t.Errorf("first delivery of Ev1: got not new, want new")
	}
	if seen("Ev1", at(10)) {
		t.Errorf("retry of Ev1: got new, want seen")
	}
	if !seen("Ev2", at(10)) {
		t.Errorf("Ev2: got not new, want new")
	}
	if !seen("Ev1", base.Add(2*time.Hour)) {
		t.Errorf("Ev1 two hours later: got seen, want forgotten (new)")
	}
}
