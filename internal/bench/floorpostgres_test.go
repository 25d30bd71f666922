package bench

import (
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// postgresURL returns HITL_TEST_POSTGRES, or skips the test.
func postgresURL(t *testing.T) string {
	t.Helper()
	url := os.Getenv("HITL_TEST_POSTGRES")
	if url == "" {
		t.Skip("HITL_TEST_POSTGRES is not set")
	}
	return url
}

// TestPostgresLoopServer drives the PostgreSQL loop floor by hand: the
// question is stored before its id is out, the wait stays blocked until
// the answer's notification, one answer wins, and the scratch table is
// gone once the server closes.
func TestPostgresLoopServer(t *testing.T) {
	ctx, url := t.Context(), postgresURL(t)
	s, err := startPostgresLoopServer(ctx, url, loopQuestions)
	if err != nil {
		t.Fatal(err)
	}
	table := s.store.(*postgresLoop).table
	a := newAPI(&Server{URL: s.URL()}, 2)
	defer a.close()
	id, err := a.create(ctx, "floor", 1)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	status := func() (st string) {
		t.Helper()
		if err := conn.QueryRow(ctx, `SELECT status FROM `+table+` WHERE id = $1`, id).Scan(&st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := status(); st != "pending" {
		t.Fatalf("question %s stored as %q; want pending", id, st)
	}
	waited := make(chan error, 1)
	go func() {
		st, err := a.wait(ctx, id, time.Minute)
		if err == nil && st != "answered" {
			err = &unexpected{st}
		}
		waited <- err
	}()
	select {
	case err := <-waited:
		t.Fatalf("the wait returned (%v) before the answer", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := a.respond(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatalf("wait: %v", err)
	}
	if st := status(); st != "answered" {
		t.Errorf("question %s stored as %q after the answer; want answered", id, st)
	}
	if err := a.respond(ctx, id); err == nil {
		t.Errorf("a second answer to %s was taken; want it refused", id)
	}
	if _, err := startPostgresLoopServer(ctx, url, loopAnswers); err == nil {
		t.Errorf("a PostgreSQL loop that does not store its questions was started")
	}
	s.close()
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, table).Scan(&exists); err != nil || exists {
		t.Errorf("scratch table %s left behind: %v, %v", table, exists, err)
	}
}

// TestPostgresFloorRoundTrips runs the pushed PostgreSQL floor with a few
// agents for a moment, reading the database's CPU: round trips complete,
// none is lost. It asserts on what was done, never on speed.
func TestPostgresFloorRoundTrips(t *testing.T) {
	url := postgresURL(t)
	lr, err := postgresFloorRoundTrips(t.Context(), url, 8, 50*time.Millisecond, 400*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if lr.RoundTrips == 0 || lr.RoundTrip.N != lr.RoundTrips || lr.Lost != 0 {
		t.Errorf("PostgreSQL floor round trips: %+v; want some, timed, none lost", lr)
	}
	d, err := postgresFloorLoop(t.Context(), url, 10, func(string, ...any) {})
	if err != nil || d.N != 10 {
		t.Errorf("PostgreSQL floor loop: %+v, %v", d, err)
	}
}

// unexpected is a wait that ended otherwise than answered.
type unexpected struct{ status string }

func (u *unexpected) Error() string { return "wait ended " + u.status }
