package storetest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

// testInteractionEvents checks that InteractionEvents reads one
// interaction's events, in order, and no other's, with after and limit
// paging through them.
func testInteractionEvents(t *testing.T, s hitl.Store) {
	one := create(t, s, askAt(t, base, 60))
	other := create(t, s, askAt(t, base, 60))
	appendEvent(t, s, notified(one, 2))
	appendEvent(t, s, notified(other, 3))
	resolve(t, s, other.ID, cancel(at(4)))
	resolve(t, s, one.ID, answer(`"yes"`, at(5)))

	// What Events says about one, without the interaction.
	var want []*hitl.Event
	for _, ev := range events(t, s) {
		if ev.InteractionID == one.ID {
			e := *ev
			e.Interaction = nil
			want = append(want, &e)
		}
	}
	if len(want) != 3 {
		t.Fatalf("events of one: got %d, want created, notified and answered", len(want))
	}
	got, err := s.InteractionEvents(t.Context(), one.ID, 0, 0)
	if err != nil {
		t.Fatalf("InteractionEvents: %v", err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("InteractionEvents (-want +got):\n%s", d)
	}
	types := []hitl.EventType{hitl.EventCreated, hitl.EventNotified, hitl.EventAnswered}
	for i, ev := range got {
		if ev.Type != types[i] {
			t.Errorf("event %d: type %s, want %s", i, ev.Type, types[i])
		}
	}
	if got[1].Channel != hitl.ChannelSlack || got[1].Actor != "alice" || got[1].Detail == "" || !got[1].At.Equal(at(2)) {
		t.Errorf("notified event read back as %+v", got[1])
	}

	page, err := s.InteractionEvents(t.Context(), one.ID, want[0].Seq, 1)
	if err != nil {
		t.Fatalf("InteractionEvents(after, limit): %v", err)
	}
	if d := cmp.Diff(want[1:2], page); d != "" {
		t.Errorf("InteractionEvents(after first, 1) (-want +got):\n%s", d)
	}
	if rest, err := s.InteractionEvents(t.Context(), one.ID, want[2].Seq, 10); err != nil || len(rest) != 0 {
		t.Errorf("InteractionEvents(after last): got %v, %v; want none", rest, err)
	}
	if none, err := s.InteractionEvents(t.Context(), "no-such-id", 0, 10); err != nil || len(none) != 0 {
		t.Errorf("InteractionEvents(unknown): got %v, %v; want none", none, err)
	}
}

// testListSession checks that ListInteractions with SessionID lists one
// session's interactions, newest first, whatever their status, paged.
func testListSession(t *testing.T, s hitl.Store) {
	mk := func(session string, n int) *hitl.Interaction {
		return create(t, s, ask(t, hitl.CreateRequest{Question: "Step?", Timeout: 600, SessionID: session}, "agent", at(n)))
	}
	first := mk("run-1", 0)
	mk("run-2", 1)
	second := mk("run-1", 2)
	mk("", 3)
	third := mk("run-1", 4)
	resolve(t, s, first.ID, answer(`"done"`, at(5)))

	ids := func(list []*hitl.Interaction) []string {
		out := make([]string, len(list))
		for i, in := range list {
			out[i] = in.ID
		}
		return out
	}
	got, next := list(t, s, hitl.ListFilter{SessionID: "run-1"})
	if d := cmp.Diff([]string{third.ID, second.ID, first.ID}, ids(got)); d != "" || next != "" {
		t.Errorf("session run-1 (-want +got):\n%s; next %q", d, next)
	}
	page, next := list(t, s, hitl.ListFilter{SessionID: "run-1", Limit: 2})
	if d := cmp.Diff([]string{third.ID, second.ID}, ids(page)); d != "" || next == "" {
		t.Fatalf("first page (-want +got):\n%s; next %q", d, next)
	}
	rest, _ := list(t, s, hitl.ListFilter{SessionID: "run-1", Limit: 2, Cursor: next})
	if d := cmp.Diff([]string{first.ID}, ids(rest)); d != "" {
		t.Errorf("second page (-want +got):\n%s", d)
	}
	answered, _ := list(t, s, hitl.ListFilter{SessionID: "run-1", Status: hitl.StatusAnswered})
	if d := cmp.Diff([]string{first.ID}, ids(answered)); d != "" {
		t.Errorf("session run-1, answered (-want +got):\n%s", d)
	}
	if none, _ := list(t, s, hitl.ListFilter{SessionID: "run-9"}); len(none) != 0 {
		t.Errorf("unknown session: got %d interactions, want none", len(none))
	}
}
