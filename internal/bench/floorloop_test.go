package bench

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestLoopServerHoldsTheWaitUntilTheAnswerIsCommitted drives the floor
// loop's server by hand: a wait stays blocked until the answer, and the
// answer is in the database when the wait returns.
func TestLoopServerHoldsTheWaitUntilTheAnswerIsCommitted(t *testing.T) {
	ctx := t.Context()
	s, err := startLoopServer(ctx, filepath.Join(t.TempDir(), "loop.db"), loopAnswers)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	a := newAPI(&Server{URL: s.URL()}, 2)
	defer a.close()
	id, err := a.create(ctx, "floor", 1)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		status string
		err    error
	}
	waited := make(chan result, 1)
	go func() {
		st, err := a.wait(ctx, id, time.Minute)
		waited <- result{st, err}
	}()
	select {
	case r := <-waited:
		t.Fatalf("the wait returned %+v before the answer", r)
	case <-time.After(100 * time.Millisecond):
	}
	if err := a.respond(ctx, id); err != nil {
		t.Fatal(err)
	}
	r := <-waited
	if r.err != nil || r.status != "answered" {
		t.Fatalf("wait = %q, %v; want answered", r.status, r.err)
	}
	var n int
	if err := s.store.(*sqliteLoop).db.QueryRowContext(ctx, `SELECT count(*) FROM answers WHERE id = ?`, id).Scan(&n); err != nil || n != 1 {
		t.Errorf("answers stored for %s: %d, %v; want 1", id, n, err)
	}
}

// TestFloorLoop runs a few samples of the loop floor; it asserts on what
// was done, never on speed.
func TestFloorLoop(t *testing.T) {
	s, err := startLoopServer(context.Background(), filepath.Join(t.TempDir(), "loop.db"), loopAnswers)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	d, lost, err := unblock(t.Context(), &Server{URL: s.URL()}, 20, func(string, ...any) {})
	if err != nil || lost != 0 || d.N != 20 || d.P50 <= 0 {
		t.Fatalf("unblock against the loop server: %+v, %d lost, %v", d, lost, err)
	}
	var n int
	if err := s.store.(*sqliteLoop).db.QueryRow(`SELECT count(*) FROM answers`).Scan(&n); err != nil || n != 25 {
		t.Errorf("answers stored: %d, %v; want 25 (5 to warm up, 20 samples)", n, err)
	}
	if _, err := floorLoop(t.Context(), t.TempDir(), 10, func(string, ...any) {}); err != nil {
		t.Errorf("floorLoop: %v", err)
	}
}

// TestFloorRoundTrips runs the loop floor with several agents for a
// moment: round trips complete and are timed. It asserts on what was
// done, never on speed.
func TestFloorRoundTrips(t *testing.T) {
	for _, kind := range []loopKind{loopAnswers, loopQuestions, loopPushed, loopRows} {
		lr, err := floorRoundTrips(t.Context(), t.TempDir(), 8, kind, 50*time.Millisecond, 400*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if lr.RoundTrips == 0 || lr.RoundTrip.N != lr.RoundTrips || lr.perSecond() <= 0 || lr.Lost != 0 {
			t.Errorf("floor round trips, loop kind %d: %+v; want some, timed, none lost", kind, lr)
		}
	}
}

// TestLoopServerCommitsTheQuestionBeforeItsID checks the durable-create
// loop: by the time a create has answered, its question is in the
// database; the plain loop writes none.
func TestLoopServerCommitsTheQuestionBeforeItsID(t *testing.T) {
	ctx := t.Context()
	for _, kind := range []loopKind{loopAnswers, loopQuestions, loopPushed} {
		s, err := startLoopServer(ctx, filepath.Join(t.TempDir(), "loop.db"), kind)
		if err != nil {
			t.Fatal(err)
		}
		a := newAPI(&Server{URL: s.URL()}, 2)
		id, err := a.create(ctx, "floor", 1)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := s.store.(*sqliteLoop).db.QueryRowContext(ctx, `SELECT count(*) FROM questions WHERE id = ?`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if want := map[loopKind]int{loopAnswers: 0, loopQuestions: 1, loopPushed: 1}[kind]; n != want {
			t.Errorf("loop kind %d: %d questions stored for %s; want %d", kind, n, id, want)
		}
		a.close()
		s.close()
	}
}

// TestLoopServerPushesTheQuestion checks the pushed loop: a person's
// WebSocket receives each question, with its id and asking agent.
func TestLoopServerPushesTheQuestion(t *testing.T) {
	ctx := t.Context()
	srv, a := startPushedLoop(t)
	sub, err := subscribe(ctx, srv)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.close()
	for n := range 3 {
		id, err := a.create(ctx, "floor", n)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case q := <-sub.questions:
			if q.msg.InteractionID != id || q.msg.SourceAgent != "floor" || q.msg.Question == "" {
				t.Errorf("pushed %+v; want question %s from floor", q.msg, id)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("question %s was not pushed", id)
		}
	}
}

// TestPushedLoopReplaysToANewWebSocket: a question pushed before the
// person's WebSocket opened reaches it when it does, an answered one does
// not, and a wait on a question no one answers says pending once its
// timeout passes, as hitl's does: a run whose question is never seen
// fails instead of waiting for ever.
func TestPushedLoopReplaysToANewWebSocket(t *testing.T) {
	ctx := t.Context()
	srv, a := startPushedLoop(t)
	answered, err := a.create(ctx, "early", 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.respond(ctx, answered); err != nil {
		t.Fatal(err)
	}
	early, err := a.create(ctx, "early", 2)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := a.wait(ctx, early, 50*time.Millisecond); err != nil || st != "pending" {
		t.Errorf("wait on an unanswered question: %q, %v; want pending after its timeout", st, err)
	}
	sub, err := subscribe(ctx, srv)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.close()
	next := func(want, what string) {
		t.Helper()
		select {
		case q := <-sub.questions:
			if q.msg.InteractionID != want {
				t.Errorf("the WebSocket got %s; want %s, %s", q.msg.InteractionID, want, what)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s never reached the WebSocket", what)
		}
	}
	next(early, "the question asked before it opened, not yet answered")
	later, err := a.create(ctx, "later", 3)
	if err != nil {
		t.Fatal(err)
	}
	next(later, "the question asked once it was open (the answered one is not sent)")
}

// startPushedLoop starts a pushed loop server for the test and a client
// of it, both closed when the test ends.
func startPushedLoop(t *testing.T) (*Server, *api) {
	t.Helper()
	s, err := startLoopServer(t.Context(), filepath.Join(t.TempDir(), "loop.db"), loopPushed)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	srv := &Server{URL: s.URL()}
	a := newAPI(srv, 2)
	t.Cleanup(a.close)
	return srv, a
}
