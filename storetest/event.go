package storetest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

// notified is a notification event for in at second n.
func notified(in *hitl.Interaction, n int) *hitl.Event {
	return &hitl.Event{
		Type:          hitl.EventNotified,
		InteractionID: in.ID,
		At:            at(n),
		Actor:         "alice",
		Channel:       hitl.ChannelSlack,
		Detail:        "C0123/1700000000.000100",
	}
}

// appendEvent appends ev, which must succeed.
func appendEvent(t *testing.T, s hitl.Store, ev *hitl.Event) *hitl.Event {
	t.Helper()
	out, err := s.AppendEvent(t.Context(), ev)
	if err != nil {
		t.Fatalf("AppendEvent(%s): %v", ev.Type, err)
	}
	return out
}

func testAppendEvent(t *testing.T, s hitl.Store) {
	in := create(t, s, askAt(t, base, 60))
	created := lastSeq(t, s)
	out := appendEvent(t, s, notified(in, 5))
	want := notified(in, 5)
	want.Seq = out.Seq
	want.Interaction = in
	if d := cmp.Diff(want, out); d != "" {
		t.Errorf("AppendEvent returned (-want +got):\n%s", d)
	}
	if out.Seq <= created {
		t.Errorf("Seq: got %d, want > %d", out.Seq, created)
	}
	if got := lastSeq(t, s); got != out.Seq {
		t.Errorf("LastEventSeq: got %d, want %d", got, out.Seq)
	}
	evs, err := s.Events(t.Context(), created, 10)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]*hitl.Event{want}, evs); d != "" {
		t.Errorf("Events (-want +got):\n%s", d)
	}
	if d := cmp.Diff(in, get(t, s, in.ID)); d != "" {
		t.Errorf("interaction changed by AppendEvent (-want +got):\n%s", d)
	}
}

func testAppendEventDefaults(t *testing.T, s hitl.Store) {
	in := create(t, s, askAt(t, base, 60))
	out := appendEvent(t, s, &hitl.Event{Type: hitl.EventNotified, InteractionID: in.ID})
	if out.At.IsZero() {
		t.Errorf("At: got zero, want the store's now")
	}
	evs, err := s.Events(t.Context(), out.Seq-1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || !evs[0].At.Equal(out.At) {
		t.Errorf("Events: got %+v, want one event at %v", evs, out.At)
	}
}

func testAppendEventNotFound(t *testing.T, s hitl.Store) {
	in := create(t, s, askAt(t, base, 60))
	seq := lastSeq(t, s)
	ev := notified(in, 5)
	ev.InteractionID = "no-such-id"
	_, err := s.AppendEvent(t.Context(), ev)
	wantCode(t, "AppendEvent(unknown interaction)", err, hitl.ENOTFOUND)
	if got := lastSeq(t, s); got != seq {
		t.Errorf("LastEventSeq: got %d, want %d", got, seq)
	}
}

func testEvents(t *testing.T, s hitl.Store) {
	if evs := events(t, s); len(evs) != 0 {
		t.Fatalf("empty store: got %d events", len(evs))
	}
	all := createN(t, s, 3, "agent")
	resolve(t, s, all[1].ID, answer(`"x"`, at(10)))
	appendEvent(t, s, notified(all[2], 11))

	evs := events(t, s)
	type summary struct {
		Type hitl.EventType
		ID   string
	}
	var got []summary
	for i, ev := range evs {
		got = append(got, summary{ev.Type, ev.InteractionID})
		if i > 0 && ev.Seq <= evs[i-1].Seq {
			t.Errorf("event %d: Seq %d after %d, want increasing", i, ev.Seq, evs[i-1].Seq)
		}
		if ev.Interaction == nil || ev.Interaction.ID != ev.InteractionID {
			t.Errorf("event %d: Interaction %+v, want interaction %s", i, ev.Interaction, ev.InteractionID)
		}
	}
	want := []summary{
		{hitl.EventCreated, all[0].ID},
		{hitl.EventCreated, all[1].ID},
		{hitl.EventCreated, all[2].ID},
		{hitl.EventAnswered, all[1].ID},
		{hitl.EventNotified, all[2].ID},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("events (-want +got):\n%s", d)
	}

	tests := []struct {
		name  string
		after int64
		limit int
		want  []*hitl.Event
	}{
		{"All", 0, 100, evs},
		{"After", evs[1].Seq, 100, evs[2:]},
		{"Limit", 0, 2, evs[:2]},
		{"AfterAndLimit", evs[1].Seq, 2, evs[2:4]},
		{"AfterLast", evs[4].Seq, 10, nil},
		{"AfterBeyond", evs[4].Seq + 100, 10, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Events(t.Context(), tt.after, tt.limit)
			if err != nil {
				t.Fatalf("Events(%d, %d): %v", tt.after, tt.limit, err)
			}
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Events(%d, %d) (-want +got):\n%s", tt.after, tt.limit, d)
			}
		})
	}
}

// testEventsInteractionIsCurrent checks that an event read back carries
// the interaction's state at read time, not at the event's time.
func testEventsInteractionIsCurrent(t *testing.T, s hitl.Store) {
	in := create(t, s, askAt(t, base, 60))
	done, _ := resolve(t, s, in.ID, answer(`"yes"`, at(3)))
	evs := events(t, s)
	if len(evs) != 2 {
		t.Fatalf("got %d events, want 2", len(evs))
	}
	for i, ev := range evs {
		if d := cmp.Diff(done, ev.Interaction); d != "" {
			t.Errorf("event %d (%s) interaction (-want current +got):\n%s", i, ev.Type, d)
		}
	}
}

func testLastEventSeq(t *testing.T, s hitl.Store) {
	if got := lastSeq(t, s); got != 0 {
		t.Fatalf("empty store: got %d, want 0", got)
	}
	var prev int64
	step := func(what string, seq int64) {
		t.Helper()
		if seq <= prev {
			t.Errorf("%s: got Seq %d, want > %d", what, seq, prev)
		}
		if got := lastSeq(t, s); got != seq {
			t.Errorf("%s: LastEventSeq got %d, want %d", what, got, seq)
		}
		prev = seq
	}
	for i := range 3 {
		_, ev, _, err := s.CreateInteraction(t.Context(), askAt(t, at(i), 60))
		if err != nil {
			t.Fatal(err)
		}
		step("create", ev.Seq)
		step("notify", appendEvent(t, s, notified(ev.Interaction, i)).Seq)
		_, rev := resolve(t, s, ev.InteractionID, cancel(at(i+1)))
		step("cancel", rev.Seq)
	}
}

func testPing(t *testing.T, s hitl.Store) {
	if err := s.Ping(t.Context()); err != nil {
		t.Errorf("Ping: %v", err)
	}
}
