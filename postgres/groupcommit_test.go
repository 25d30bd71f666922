package postgres

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hitl-sh/hitl"
)

// heldGroups holds s's group commit as if a group were committing, so
// that writes queue, until the returned function starts the next group:
// a test knows which writes share it.
func heldGroups(t *testing.T, s *Store) (start func()) {
	t.Helper()
	g := s.group
	g.mu.Lock()
	if g.leading {
		t.Fatal("a group is under way")
	}
	g.leading = true
	g.mu.Unlock()
	var once sync.Once
	start = func() { once.Do(func() { go g.commitNext() }) }
	t.Cleanup(start) // so that no write waits for ever
	return start
}

// queued waits until n writes wait for s's group commit.
func queued(t *testing.T, s *Store, n int) {
	t.Helper()
	for deadline := time.Now().Add(waitTimeout); ; time.Sleep(time.Millisecond) {
		s.group.mu.Lock()
		got := len(s.group.queue)
		s.group.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d writes queued, want %d", got, n)
		}
	}
}

// transactions counts the transactions that last wrote the interactions
// with the given ids (distinct xmin).
func transactions(t *testing.T, s *Store, ids []string) int {
	t.Helper()
	var n int
	err := s.queryRow(t.Context(), `SELECT count(DISTINCT xmin::text) FROM interactions WHERE id = ANY($1)`, []any{ids}, &n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func question(t *testing.T, q string) *hitl.Interaction {
	t.Helper()
	in, err := hitl.NewInteraction(hitl.CreateRequest{Question: q}, hitl.Caller{Name: "agent"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestGroupCommit: writes waiting together commit in one transaction, each
// with its own outcome, and exactly one of two answers to one question
// wins in a group as it does alone.
func TestGroupCommit(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	listened := make(chan int64, 64)
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	go s.ListenEvents(ctx, 0, func(upTo int64) { listened <- upTo })

	const n = 8
	start := heldGroups(t, s)
	created := make([]*hitl.Interaction, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			in, ev, _, err := s.CreateInteraction(t.Context(), question(t, "Deploy?"))
			if err != nil {
				t.Errorf("CreateInteraction: %v", err)
				return
			}
			if ev.Seq == 0 || in.Status != hitl.StatusPending {
				t.Errorf("created %+v with event %d", in, ev.Seq)
			}
			created[i] = in
		})
	}
	queued(t, s, n)
	start()
	wg.Wait()
	if t.Failed() {
		return
	}
	ids := make([]string, n)
	for i, in := range created {
		ids[i] = in.ID
	}
	if got := transactions(t, s, ids); got != 1 {
		t.Errorf("%d questions created in %d transactions, want 1", n, got)
	}

	// Every answer, a second answer to the first question and an event
	// appended to the last, in one group.
	start = heldGroups(t, s)
	errs := make([]error, n+1)
	for i := range n + 1 {
		wg.Go(func() {
			tr := hitl.Transition{Status: hitl.StatusAnswered, Value: []byte(`"yes"`), By: "alice", Via: hitl.ChannelWeb}
			_, _, errs[i] = s.Resolve(t.Context(), ids[i%n], tr)
		})
	}
	wg.Go(func() {
		if _, err := s.AppendEvent(t.Context(), &hitl.Event{Type: hitl.EventNotified, InteractionID: ids[n-1]}); err != nil {
			t.Errorf("AppendEvent: %v", err)
		}
	})
	queued(t, s, n+2)
	start()
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case i%n == 0 && errors.Is(err, hitl.ErrNotPending):
		default:
			t.Errorf("answer %d: %v", i, err)
		}
	}
	if won != n {
		t.Errorf("%d answers won, want %d", won, n)
	}
	if got := transactions(t, s, ids); got != 1 {
		t.Errorf("%d questions answered in %d transactions, want 1", n, got)
	}
	var later int
	err := s.queryRow(t.Context(), `SELECT count(DISTINCT xmin::text) FROM events WHERE type <> 'created'`, nil, &later)
	if err != nil || later != 1 {
		t.Errorf("the answers' and the appended event written by %d transactions (%v), want 1", later, err)
	}

	// The other replicas hear of every event: n created, n answered, one
	// appended.
	for deadline := time.After(waitTimeout); ; {
		select {
		case upTo := <-listened:
			if upTo >= 2*n+1 {
				return
			}
		case <-deadline:
			t.Fatalf("the listener did not report all %d events", 2*n+1)
		}
	}
}

// TestGroupCommitRefused: when the database refuses one write of a group,
// the group rolls back and each write runs alone, so only the refused one
// fails.
func TestGroupCommitRefused(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	taken, _ := newInteraction(t, s)

	start := heldGroups(t, s)
	var wg sync.WaitGroup
	var ok [2]*hitl.Interaction
	for i := range ok {
		wg.Go(func() {
			var err error
			if ok[i], _, _, err = s.CreateInteraction(t.Context(), question(t, "Deploy?")); err != nil {
				t.Errorf("CreateInteraction: %v", err)
			}
		})
	}
	var dupErr error
	wg.Go(func() {
		dup := question(t, "Again?")
		dup.ID = taken.ID
		_, _, _, dupErr = s.CreateInteraction(t.Context(), dup)
	})
	queued(t, s, 3)
	start()
	wg.Wait()
	if hitl.ErrorCode(dupErr) != hitl.ECONFLICT {
		t.Errorf("a create with a taken id: %v, want %s", dupErr, hitl.ECONFLICT)
	}
	for _, in := range ok {
		if in == nil {
			continue
		}
		if _, err := s.Interaction(t.Context(), in.ID); err != nil {
			t.Errorf("a create grouped with a refused one: %v", err)
		}
	}
	got, err := s.Interaction(t.Context(), taken.ID)
	if err != nil || got.Question != taken.Question {
		t.Errorf("the interaction whose id was taken: %+v, %v", got, err)
	}
}

// TestGroupCommitCallerGone: a write whose caller's context has ended
// before its group starts is not run; one whose caller is still there is.
func TestGroupCommitCallerGone(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	start := heldGroups(t, s)
	gone, leave := context.WithCancel(t.Context())
	left, stayed := question(t, "Left?"), question(t, "Stayed?")
	left.ID, stayed.ID = uuid.NewString(), uuid.NewString()
	leftDone := make(chan error, 1)
	go func() {
		_, _, _, err := s.CreateInteraction(gone, left)
		leftDone <- err
	}()
	queued(t, s, 1)
	var wg sync.WaitGroup
	var stayedErr error
	wg.Go(func() { _, _, _, stayedErr = s.CreateInteraction(t.Context(), stayed) })
	queued(t, s, 2)
	leave()
	start()
	leftErr := <-leftDone
	wg.Wait()
	if !errors.Is(leftErr, context.Canceled) {
		t.Errorf("the create whose caller left: %v, want %v", leftErr, context.Canceled)
	}
	if stayedErr != nil {
		t.Errorf("the create whose caller stayed: %v", stayedErr)
	}
	if _, err := s.Interaction(t.Context(), left.ID); hitl.ErrorCode(err) != hitl.ENOTFOUND {
		t.Errorf("the create whose caller left was written: %v", err)
	}
	if _, err := s.Interaction(t.Context(), stayed.ID); err != nil {
		t.Errorf("the create whose caller stayed: %v", err)
	}
}

// TestGroupCommitClosed: a write after Close fails at once.
func TestGroupCommitClosed(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	s.Close()
	done := make(chan error, 1)
	go func() {
		_, _, _, err := s.CreateInteraction(t.Context(), question(t, "Deploy?"))
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a create after Close succeeded")
		}
	case <-time.After(waitTimeout):
		t.Fatal("a create after Close did not return")
	}
}
