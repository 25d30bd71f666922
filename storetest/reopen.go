package storetest

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

// RunReopen checks that everything a store wrote survives closing it and
// opening the database again. newDatabase is called once per test, makes a
// new empty database and returns open, which opens a store on that same
// database each time it is called. The suite closes every store open
// returns, once.
func RunReopen(t *testing.T, newDatabase func(t *testing.T) (open func(t *testing.T) hitl.Store)) {
	t.Helper()
	t.Run("Reopen", func(t *testing.T) {
		t.Parallel()
		testReopen(t, newDatabase(t))
	})
	t.Run("ReopenEscalation", func(t *testing.T) {
		t.Parallel()
		testReopenEscalation(t, newDatabase(t))
	})
	t.Run("ReopenAfterPurge", func(t *testing.T) {
		t.Parallel()
		testReopenAfterPurge(t, newDatabase(t))
	})
}

// testReopenAfterPurge checks that how far the log was purged survives a
// restart, and that the numbers go on after the newest one.
func testReopenAfterPurge(t *testing.T, open func(t *testing.T) hitl.Store) {
	s1 := &opened{Store: open(t)}
	t.Cleanup(func() { s1.Close() })
	old := create(t, s1, askAt(t, base, 60))
	_, ev := resolve(t, s1, old.ID, cancel(at(1)))
	create(t, s1, askAt(t, at(2), 60))
	seq := lastSeq(t, s1)
	if got := purge(t, s1, hitl.Purge{EndedBefore: at(100)}); len(got.IDs) != 1 {
		t.Fatalf("purge: %v, want %s", got.IDs, old.ID)
	}
	if err := s1.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	s2 := &opened{Store: open(t)}
	t.Cleanup(func() { s2.Close() })
	if got := purgedThrough(t, s2); got != ev.Seq {
		t.Errorf("PurgedThrough after reopen: %d, want %d", got, ev.Seq)
	}
	if got := lastSeq(t, s2); got != seq {
		t.Errorf("LastEventSeq after reopen: %d, want %d", got, seq)
	}
	next := create(t, s2, askAt(t, at(3), 60))
	if evs := events(t, s2); evs[len(evs)-1].InteractionID != next.ID || evs[len(evs)-1].Seq <= seq {
		t.Errorf("first event after reopen: %+v, want one of %s after %d", evs[len(evs)-1], next.ID, seq)
	}
}

// opened is a store that closes once: explicitly, or when the test ends.
type opened struct {
	hitl.Store
	once sync.Once
	err  error
}

// Close closes the store the first time it is called.
func (o *opened) Close() error {
	o.once.Do(func() { o.err = o.Store.Close() })
	return o.err
}

func testReopen(t *testing.T, open func(t *testing.T) hitl.Store) {
	reopen := func() *opened {
		t.Helper()
		o := &opened{Store: open(t)}
		t.Cleanup(func() { o.Close() })
		return o
	}
	closeStore := func(o *opened) {
		t.Helper()
		if err := o.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}

	s1 := reopen()
	pending := create(t, s1, ask(t, hitl.CreateRequest{IdempotencyKey: "k", Timeout: 60}, "agent", base))
	answered := create(t, s1, askAt(t, at(1), 60))
	cancelled := create(t, s1, everyField())
	// The answer's idempotency key is durable: a retry after a restart is
	// still recognised.
	answered, _ = resolve(t, s1, answered.ID, keyed(answer(`"yes"`, at(2)), "answer-key-1"))
	cancelled, _ = resolve(t, s1, cancelled.ID, cancel(at(3)))
	appendEvent(t, s1, notified(pending, 4))
	seq := lastSeq(t, s1)
	before := events(t, s1)
	closeStore(s1)

	s2 := reopen()
	for _, want := range []*hitl.Interaction{pending, answered, cancelled} {
		if d := cmp.Diff(want, get(t, s2, want.ID)); d != "" {
			t.Errorf("interaction %s after reopen (-want +got):\n%s", want.ID, d)
		}
	}
	if got := get(t, s2, answered.ID).Result; got == nil || got.IdempotencyKey != "answer-key-1" {
		t.Errorf("answer after reopen: got result %+v, want idempotency key answer-key-1", got)
	}
	if got := lastSeq(t, s2); got != seq {
		t.Errorf("LastEventSeq after reopen: got %d, want %d", got, seq)
	}
	if d := cmp.Diff(before, events(t, s2)); d != "" {
		t.Errorf("events after reopen (-want +got):\n%s", d)
	}
	next, ok, err := s2.NextDeadline(t.Context())
	if err != nil || !ok || !next.Equal(pending.Deadline) {
		t.Errorf("NextDeadline after reopen: got %v, %v, %v; want %v", next, ok, err, pending.Deadline)
	}
	due, err := s2.DueInteractions(t.Context(), pending.Deadline, 10)
	if err != nil || len(due) != 1 || due[0].ID != pending.ID {
		t.Errorf("DueInteractions after reopen: got %v, %v; want [%s]", ids(due), err, pending.ID)
	}
	got, _, existed, err := s2.CreateInteraction(t.Context(), ask(t, hitl.CreateRequest{IdempotencyKey: "k"}, "agent", at(5)))
	if err != nil || !existed || got.ID != pending.ID {
		t.Errorf("idempotent create after reopen: got %v, existed %v, %v; want %s", got, existed, err, pending.ID)
	}
	done, ev := resolve(t, s2, pending.ID, expire(pending.Deadline))
	if ev.Seq <= seq {
		t.Errorf("first Seq after reopen: got %d, want > %d", ev.Seq, seq)
	}
	closeStore(s2)

	s3 := reopen()
	if d := cmp.Diff(done, get(t, s3, pending.ID)); d != "" {
		t.Errorf("interaction resolved before the second reopen (-want +got):\n%s", d)
	}
	if got := lastSeq(t, s3); got != ev.Seq {
		t.Errorf("LastEventSeq after second reopen: got %d, want %d", got, ev.Seq)
	}
}
