package postgres

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/postgres/pgtest"
	"github.com/jackc/pgx/v5"
)

// waitTimeout bounds how long a test waits for the listener.
const waitTimeout = 15 * time.Second

// openStore opens a store on a new schema, closed when the test ends.
func openStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.Context(), pgtest.DSN(), &Options{Schema: pgtest.Name(t), MaxConns: 4})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// dial opens a connection like the listener's (same schema), closed when
// the test ends.
func dial(t *testing.T, s *Store) *pgx.Conn {
	t.Helper()
	c, err := s.dial(t.Context())
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { closeConn(c) })
	return c
}

// newInteraction stores a pending interaction and returns it with its
// created event's sequence number.
func newInteraction(t *testing.T, s *Store) (*hitl.Interaction, int64) {
	t.Helper()
	in, err := hitl.NewInteraction(hitl.CreateRequest{Question: "Deploy?"}, hitl.Caller{Name: "agent"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	got, ev, _, err := s.CreateInteraction(t.Context(), in)
	if err != nil {
		t.Fatalf("CreateInteraction: %v", err)
	}
	return got, ev.Seq
}

// notify appends a notified event for in and returns its sequence number.
func notify(t *testing.T, s *Store, in *hitl.Interaction) int64 {
	t.Helper()
	ev, err := s.AppendEvent(t.Context(), &hitl.Event{Type: hitl.EventNotified, InteractionID: in.ID})
	if err != nil {
		t.Fatalf("AppendEvent: %v", err)
	}
	return ev.Seq
}

// slowWrite begins a transaction on c that takes the next sequence number
// for an event of in, as another replica's write still committing does,
// and returns it with that number.
func slowWrite(t *testing.T, c *pgx.Conn, in *hitl.Interaction) (pgx.Tx, int64) {
	t.Helper()
	tx, err := c.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var seq int64
	err = tx.QueryRow(t.Context(), `INSERT INTO events (type, interaction_id, at) VALUES ('notified', $1, now()) RETURNING seq`, in.ID).Scan(&seq)
	if err != nil {
		t.Fatal(err)
	}
	return tx, seq
}

// checkSafe runs one check and compares the reported safe point.
func checkSafe(t *testing.T, tr *tracker, c *pgx.Conn, want int64, what string) {
	t.Helper()
	if err := tr.check(t.Context(), c); err != nil {
		t.Fatalf("%s: check: %v", what, err)
	}
	if tr.safe != want {
		t.Fatalf("%s: got safe %d, want %d (gaps %+v)", what, tr.safe, want, tr.gaps)
	}
}

// TestTrackerWaitsForEarlierNumber commits a later event while an earlier
// one is still in its transaction: the log is complete only up to before
// the earlier one until it commits.
func TestTrackerWaitsForEarlierNumber(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	c := dial(t, s)
	var reported []int64
	tr := &tracker{fn: func(upTo int64) { reported = append(reported, upTo) }}

	in, first := newInteraction(t, s)
	checkSafe(t, tr, c, first, "after create")

	tx, slow := slowWrite(t, dial(t, s), in)
	later := notify(t, s, in)
	if later != slow+1 {
		t.Fatalf("got sequence numbers %d then %d, want consecutive", slow, later)
	}
	checkSafe(t, tr, c, slow-1, "while the earlier write is open")
	checkSafe(t, tr, c, slow-1, "checked again while it is open")
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkSafe(t, tr, c, later, "after it commits")
	if got, want := reported, []int64{first, later}; !slices.Equal(got, want) {
		t.Errorf("reported: got %v, want %v", got, want)
	}
}

// TestTrackerSkipsRolledBackNumber rolls back a write that took a number
// before a committed one: the gap closes and the log moves past it.
func TestTrackerSkipsRolledBackNumber(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	c := dial(t, s)
	tr := &tracker{fn: func(int64) {}}
	in, first := newInteraction(t, s)
	checkSafe(t, tr, c, first, "after create")

	tx, slow := slowWrite(t, dial(t, s), in)
	later := notify(t, s, in)
	checkSafe(t, tr, c, slow-1, "while the earlier write is open")
	if err := tx.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkSafe(t, tr, c, later, "after it rolls back")

	// A number rolled back before the listener first sees the gap: the
	// gap has no writer left, and closes at the next check.
	tx, _ = slowWrite(t, dial(t, s), in)
	if err := tx.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	last := notify(t, s, in)
	if err := tr.check(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	checkSafe(t, tr, c, last, "second check after an unseen rollback")
}

// TestTrackerManyGaps interleaves open, committed and rolled-back writes.
func TestTrackerManyGaps(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	c := dial(t, s)
	tr := &tracker{fn: func(int64) {}}
	in, first := newInteraction(t, s)
	checkSafe(t, tr, c, first, "after create")

	txA, a := slowWrite(t, dial(t, s), in) // commits last
	notify(t, s, in)
	txB, _ := slowWrite(t, dial(t, s), in) // rolls back
	notify(t, s, in)
	txC, cs := slowWrite(t, dial(t, s), in) // commits first
	last := notify(t, s, in)

	checkSafe(t, tr, c, a-1, "all open")
	if err := txC.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := txB.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkSafe(t, tr, c, a-1, "the first still open")
	if err := txA.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkSafe(t, tr, c, last, "all ended")
	evs, err := s.Events(t.Context(), first, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, ev := range evs {
		got = append(got, ev.Seq)
	}
	if want := []int64{a, a + 1, a + 3, cs, last}; !slices.Equal(got, want) {
		t.Errorf("events in the log: got %v, want %v", got, want)
	}
}

// TestListenReconnects kills the listener's connection, writes while it is
// down, and checks that it reconnects, catches up, and that Ping reports
// the outage.
func TestListenReconnects(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	pids := make(chan uint32, 2)
	redial := make(chan struct{}) // the listener is redialling
	gate := make(chan struct{})   // let it reconnect
	var dials atomic.Int32
	base := s.dial
	s.dial = func(ctx context.Context) (*pgx.Conn, error) {
		if dials.Add(1) == 2 {
			close(redial)
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		c, err := base(ctx)
		if err == nil {
			pids <- c.PgConn().PID()
		}
		return c, err
	}
	ups := make(chan int64, 100)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.ListenEvents(ctx, 0, func(upTo int64) { ups <- upTo }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ListenEvents: %v", err)
		}
	})

	in, seq := newInteraction(t, s)
	waitUpTo(t, ups, seq)
	pgtest.Exec(t, `SELECT pg_terminate_backend($1)`, int32(<-pids))
	select {
	case <-redial:
	case <-time.After(waitTimeout):
		t.Fatal("the listener did not reconnect after its connection was killed")
	}
	if err := s.Ping(t.Context()); err == nil {
		t.Error("Ping while the listener is down: got no error")
	}
	missed := notify(t, s, in)
	close(gate)
	waitUpTo(t, ups, missed)
	if err := s.Ping(t.Context()); err != nil {
		t.Errorf("Ping after reconnecting: %v", err)
	}
	after := notify(t, s, in)
	waitUpTo(t, ups, after)
}

// waitUpTo waits until the listener reports seq or more.
func waitUpTo(t *testing.T, ups <-chan int64, seq int64) {
	t.Helper()
	timeout := time.After(waitTimeout)
	for {
		select {
		case got := <-ups:
			if got >= seq {
				return
			}
		case <-timeout:
			t.Fatalf("listener did not report %d in %v", seq, waitTimeout)
		}
	}
}

// TestLastEventSeqWaitsForWriters: while a write that took an earlier
// number is open, LastEventSeq does not return the later one.
func TestLastEventSeqWaitsForWriters(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	in, _ := newInteraction(t, s)
	tx, _ := slowWrite(t, dial(t, s), in)
	later := notify(t, s, in)

	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if seq, err := s.LastEventSeq(ctx); err == nil {
		t.Fatalf("LastEventSeq with a write open: got %d, want it to wait", seq)
	}
	if err := tx.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	seq, err := s.LastEventSeq(t.Context())
	if err != nil || seq != later {
		t.Errorf("LastEventSeq: got %d, %v; want %d", seq, err, later)
	}
}

// TestTrackerTakesTheNextNumberWithoutReading: a notification of the
// number right after a complete log is reported at once; one further on,
// or while a gap is open, needs a check; one already seen needs nothing.
func TestTrackerTakesTheNextNumberWithoutReading(t *testing.T) {
	var reported []int64
	tr := &tracker{safe: 5, seen: 5, fn: func(upTo int64) { reported = append(reported, upTo) }}
	for _, c := range []struct {
		payload string
		taken   bool
		safe    int64
	}{{"6", true, 6}, {"7", true, 7}, {"5", true, 7}, {"9", false, 7}, {"not a number", false, 7}} {
		if got := tr.notified(c.payload); got != c.taken || tr.safe != c.safe {
			t.Errorf("notified(%q): taken %v, safe %d; want %v, %d", c.payload, got, tr.safe, c.taken, c.safe)
		}
	}
	if !slices.Equal(reported, []int64{6, 7}) {
		t.Errorf("reported %v; want [6 7]", reported)
	}
	tr.gaps = []gap{{from: 8, to: 8}}
	if tr.notified("8") {
		t.Errorf("a notification was taken while a gap is open")
	}
}
