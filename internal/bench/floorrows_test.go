package bench

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/postgres"
	"github.com/hitl-sh/hitl/sqlite"
)

// TestRowsLoopWritesHitlsRecord checks that the floor writing hitl's rows
// writes what hitl itself reads as the question asked and answered: hitl's
// store, opened on the floor's file afterwards, finds the question with its
// asking agent, answered true, and its created and answered events.
func TestRowsLoopWritesHitlsRecord(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "rows.db")
	s, err := startRowsLoopServer(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	id := askAndAnswer(t, s)
	s.close()

	st, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	in, err := st.Interaction(ctx, id)
	if err != nil {
		t.Fatalf("hitl's store does not read the floor's question %s: %v", id, err)
	}
	if in.Status != hitl.StatusAnswered || in.Result == nil || string(in.Result.Value) != "true" ||
		in.SourceAgent != "floor" || in.Question == "" || in.Type != hitl.TypeApproval {
		t.Errorf("hitl reads %+v (result %+v); want floor's approval, answered true", in, in.Result)
	}
	evs, err := st.InteractionEvents(ctx, id, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Type != hitl.EventCreated || evs[1].Type != hitl.EventAnswered {
		t.Errorf("events %+v; want created, answered", evs)
	}
}

// TestPostgresRowsLoopWritesHitlsRecord is TestRowsLoopWritesHitlsRecord
// on PostgreSQL: hitl's store, opened on the floor's scratch schema, reads
// the question answered, with its events; a second answer is refused,
// and the schema is gone once the floor closes. It also runs the floor
// with several agents for a moment (none lost, never a speed).
func TestPostgresRowsLoopWritesHitlsRecord(t *testing.T) {
	ctx, url := t.Context(), postgresURL(t)
	s, err := startPostgresRowsLoopServer(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	schema := s.store.(*postgresLoop).table
	id := askAndAnswer(t, s)

	st, err := postgres.Open(ctx, url, &postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	in, err := st.Interaction(ctx, id)
	if err != nil {
		t.Fatalf("hitl's store does not read the floor's question %s: %v", id, err)
	} else if in.Status != hitl.StatusAnswered || in.Result == nil || string(in.Result.Value) != "true" || in.SourceAgent != "floor" {
		t.Errorf("hitl reads %+v (result %+v); want floor's question, answered true", in, in.Result)
	}
	if evs, err := st.InteractionEvents(ctx, id, 0, 10); err != nil || len(evs) != 2 || evs[0].Type != hitl.EventCreated || evs[1].Type != hitl.EventAnswered {
		t.Errorf("events %+v, %v; want created, answered", evs, err)
	}
	st.Close()
	s.close()

	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, schema).Scan(&exists); err != nil || exists {
		t.Errorf("scratch schema %s left behind: %v, %v", schema, exists, err)
	}

	lr, err := postgresRowsFloorRoundTrips(ctx, url, 8, 50*time.Millisecond, 400*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if lr.RoundTrips == 0 || lr.Lost != 0 {
		t.Errorf("round trips %+v; want some, none lost", lr)
	}
}

// TestHookRecordIsHitlsRecord checks the HTTP hook floor's /rows: each
// call commits what hitl reads as an action answered by a rule at its
// creation, with its created and answered events.
func TestHookRecordIsHitlsRecord(t *testing.T) {
	ctx, dir := t.Context(), t.TempDir()
	url, stop, err := floorHTTPHook(dir, 64)
	if err != nil {
		t.Fatal(err)
	}
	a := newAPI(&Server{URL: url}, 1)
	for range 2 {
		if status, out, err := a.roundTrip(ctx, "POST", "/rows", hookInput("claude-code", nextCall(), benchCommand)); err != nil || status != 200 {
			t.Fatalf("POST /rows: %d %s, %v", status, out, err)
		}
	}
	a.close()
	stop()

	st, err := sqlite.Open(filepath.Join(dir, "floorhook-rows.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ins, _, err := st.ListInteractions(ctx, hitl.ListFilter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(ins) != 2 {
		t.Fatalf("%d interactions recorded; want one per call, 2", len(ins))
	}
	for _, in := range ins {
		if in.Type != hitl.TypeAction || in.Status != hitl.StatusAnswered || in.Result == nil || in.Result.Channel != hitl.ChannelRule ||
			in.Action == nil || in.SourceAgent != "claude-code" || in.IdempotencyKey == "" {
			t.Errorf("hitl reads %+v (result %+v); want Claude Code's action, answered by a rule", in, in.Result)
		}
		evs, err := st.InteractionEvents(ctx, in.ID, 0, 10)
		if err != nil || len(evs) != 2 || evs[0].Type != hitl.EventCreated || evs[1].Type != hitl.EventAnswered {
			t.Errorf("events %+v, %v; want created, answered", evs, err)
		}
	}
}

// askAndAnswer asks the loop server s one question from the agent
// "floor", answers it, waits for it to be answered, and checks that a
// second answer is refused. It returns the question's id.
func askAndAnswer(t *testing.T, s *loopServer) string {
	t.Helper()
	ctx := t.Context()
	a := newAPI(&Server{URL: s.URL()}, 2)
	defer a.close()
	id, err := a.create(ctx, "floor", 7)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.respond(ctx, id); err != nil {
		t.Fatal(err)
	}
	if status, err := a.wait(ctx, id, 5*time.Second); err != nil || status != "answered" {
		t.Fatalf("wait: %q, %v; want answered", status, err)
	}
	if err := a.respond(ctx, id); err == nil {
		t.Error("a second answer to the same question was accepted; want it refused (compare-and-set)")
	}
	return id
}
