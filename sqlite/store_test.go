package sqlite_test

import (
	"database/sql"
	"errors"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/sqlite"
	"github.com/hitl-sh/hitl/storetest"
)

// open opens a store at path, closed when the test ends.
func open(t testing.TB, path string, opts *sqlite.Options) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(path, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// tempPath returns the path of a new database file in a temp directory.
func tempPath(t testing.TB) string {
	return filepath.Join(t.TempDir(), "hitl.db")
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) hitl.Store {
		return open(t, tempPath(t), nil)
	})
}

func TestStoreMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) hitl.Store {
		return open(t, ":memory:", nil)
	})
}

func TestStoreReopen(t *testing.T) {
	storetest.RunReopen(t, func(t *testing.T) func(t *testing.T) hitl.Store {
		path := tempPath(t)
		return func(t *testing.T) hitl.Store {
			s, err := sqlite.Open(path, nil)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			return s
		}
	})
}

// inspect opens a plain connection to the database at path.
func inspect(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestWAL(t *testing.T) {
	path := tempPath(t)
	open(t, path, nil)
	var mode string
	if err := inspect(t, path).QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode: got %q, want wal", mode)
	}
}

func TestMigrationsIdempotent(t *testing.T) {
	path := tempPath(t)
	for range 3 {
		s, err := sqlite.Open(path, nil)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	rows, err := inspect(t, path).Query(`SELECT version, name FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var v int
		var name string
		if err := rows.Scan(&v, &name); err != nil {
			t.Fatal(err)
		}
		got = append(got, name)
	}
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("migration files: %v, %v", files, err)
	}
	var want []string
	for _, f := range files {
		want = append(want, filepath.Base(f))
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("schema_migrations (-want +got):\n%s", d)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	path := tempPath(t)
	s, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := inspect(t, path).Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, '9999_future.sql', 0)`); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(path, nil); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("Open: got error %v, want a refusal of the newer schema", err)
	}
}

func TestPendingSurvivesReopen(t *testing.T) {
	path := tempPath(t)
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	s, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want []*hitl.Interaction
	for i := range 5 {
		in, err := hitl.NewInteraction(hitl.CreateRequest{Question: "q", Timeout: float64(10 + i)}, hitl.Caller{Name: "agent"}, now)
		if err != nil {
			t.Fatal(err)
		}
		got, _, _, err := s.CreateInteraction(t.Context(), in)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = open(t, path, nil)
	due, err := s.DueInteractions(t.Context(), now.Add(time.Hour), 100)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, due); d != "" {
		t.Errorf("pending interactions after reopen, earliest deadline first (-want +got):\n%s", d)
	}
	n, err := s.CountInteractions(t.Context(), hitl.StatusPending)
	if err != nil || n != len(want) {
		t.Errorf("CountInteractions(pending): got %d, %v; want %d", n, err, len(want))
	}
}

func TestMintsUUIDv7(t *testing.T) {
	s := open(t, tempPath(t), nil)
	in, err := hitl.NewInteraction(hitl.CreateRequest{Question: "q"}, hitl.Caller{Name: "agent"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	got, _, _, err := s.CreateInteraction(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	id, err := uuid.Parse(got.ID)
	if err != nil || id.Version() != 7 {
		t.Errorf("ID %q: got version %d (%v), want a UUIDv7", got.ID, id.Version(), err)
	}
	if in.ID != "" {
		t.Errorf("input modified: ID %q", in.ID)
	}
}

func TestClock(t *testing.T) {
	now := time.Date(2031, 2, 3, 4, 5, 6, 789_123_456, time.UTC)
	s := open(t, tempPath(t), &sqlite.Options{Now: func() time.Time { return now }, Logger: slog.New(slog.DiscardHandler)})
	in := &hitl.Interaction{Type: hitl.TypeFreeText, Question: "q"}
	got, ev, _, err := s.CreateInteraction(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	want := now.Truncate(time.Millisecond)
	if !got.CreatedAt.Equal(want) || !ev.At.Equal(want) {
		t.Errorf("created at %v, event at %v; want %v", got.CreatedAt, ev.At, want)
	}
	out, _, err := s.Resolve(t.Context(), got.ID, hitl.Transition{Status: hitl.StatusCancelled})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Result.RespondedAt.Equal(want) {
		t.Errorf("responded at %v, want %v", out.Result.RespondedAt, want)
	}
}

func TestOpenBadPath(t *testing.T) {
	if s, err := sqlite.Open(filepath.Join(t.TempDir(), "missing", "dir", "hitl.db"), nil); err == nil {
		s.Close()
		t.Errorf("Open in a missing directory: got no error")
	}
}

// TestBadCursor checks cursors that decode but are not this store's.
func TestBadCursor(t *testing.T) {
	s := open(t, tempPath(t), nil)
	for _, c := range []string{"AAAA", "eA", "bm9jb2xvbg", "eDp5", "MTI6"} { // "nocolon", "x:y", "12:"
		_, _, err := s.ListInteractions(t.Context(), hitl.ListFilter{Cursor: c})
		if hitl.ErrorCode(err) != hitl.EINVALID {
			t.Errorf("cursor %q: got error %v, want code %s", c, err, hitl.EINVALID)
		}
	}
}

func TestExclusive(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("the lock is Unix only")
	}
	path := tempPath(t)
	first, err := sqlite.Open(path, &sqlite.Options{Exclusive: true})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if s, err := sqlite.Open(path, &sqlite.Options{Exclusive: true}); !errors.Is(err, sqlite.ErrInUse) {
		if err == nil {
			s.Close()
		}
		t.Fatalf("a second exclusive Open: %v, want ErrInUse", err)
	}
	// Managing users and tokens beside the server is fine.
	manage := open(t, path, nil)
	if err := manage.Ping(t.Context()); err != nil {
		t.Fatalf("ping a shared store: %v", err)
	}
	if err := first.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	open(t, path, &sqlite.Options{Exclusive: true}) // released on Close
}

// TestLeanEventsMigration takes a database back to the events table of
// 0001 (AUTOINCREMENT, an index by interaction) and migrates it again:
// the log and its numbers are kept, and new events go on after them.
func TestLeanEventsMigration(t *testing.T) {
	path := tempPath(t)
	s, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 3 {
		in, _, _, err := s.CreateInteraction(t.Context(), newInteraction(t))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, in.ID)
	}
	if _, _, err := s.Resolve(t.Context(), ids[0], hitl.Transition{Status: hitl.StatusCancelled, By: "bob", Via: hitl.ChannelWeb, Reason: "no"}); err != nil {
		t.Fatal(err)
	}
	want, err := s.Events(t.Context(), 0, 100)
	if err != nil || len(want) != 4 {
		t.Fatalf("events: %d, %v; want 4", len(want), err)
	}
	s.Close()

	db := inspect(t, path)
	if _, err := db.Exec(`
		DELETE FROM schema_migrations WHERE version = 4;
		CREATE TABLE events_old (
			seq            INTEGER PRIMARY KEY AUTOINCREMENT,
			type           TEXT    NOT NULL,
			interaction_id TEXT    NOT NULL REFERENCES interactions (id),
			at             INTEGER NOT NULL,
			actor          TEXT    NOT NULL DEFAULT '',
			channel        TEXT    NOT NULL DEFAULT '',
			detail         TEXT    NOT NULL DEFAULT ''
		) STRICT;
		INSERT INTO events_old SELECT * FROM events;
		DROP TABLE events;
		ALTER TABLE events_old RENAME TO events;
		CREATE INDEX events_interaction ON events (interaction_id, seq);`); err != nil {
		t.Fatalf("go back to the old events table: %v", err)
	}
	db.Close()

	s = open(t, path, nil)
	got, err := s.Events(t.Context(), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events after the migration (-want +got):\n%s", d)
	}
	_, ev, _, err := s.CreateInteraction(t.Context(), newInteraction(t))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Seq != 5 {
		t.Errorf("next event: seq %d, want 5", ev.Seq)
	}
	var n int
	if err := inspect(t, path).QueryRow(`SELECT count(*) FROM sqlite_master WHERE name IN ('events_interaction', 'events_old', 'events_lean')`).Scan(&n); err != nil || n != 0 {
		t.Errorf("leftovers of the old events table: %d, %v", n, err)
	}
}

func TestPendingDeadlineMigration(t *testing.T) {
	path := tempPath(t)
	s := open(t, path, nil)
	var ids []string
	for i := range 3 {
		in := newInteraction(t)
		in.Deadline = time.Now().Add(time.Duration(i+1) * time.Minute)
		got, _, _, err := s.CreateInteraction(t.Context(), in)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, got.ID)
	}
	// The earliest is answered: the next deadline is the second's.
	if _, _, err := s.Resolve(t.Context(), ids[0], hitl.Transition{Status: hitl.StatusAnswered, Value: []byte(`"yes"`), By: "bob", Via: hitl.ChannelWeb}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	db := inspect(t, path)
	if _, err := db.Exec(`
		DELETE FROM schema_migrations WHERE version IN (5, 21);
		DROP INDEX IF EXISTS interactions_pending_deadline;
		CREATE INDEX interactions_status_deadline ON interactions (status, deadline, id);`); err != nil {
		t.Fatalf("go back to the old index: %v", err)
	}
	db.Close()

	s = open(t, path, nil)
	var names []string
	rows, err := inspect(t, path).Query(`SELECT name FROM sqlite_master WHERE name LIKE '%deadline%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	rows.Close()
	// Migration 5 made interactions_pending_deadline; migration 21 drops
	// it again, for interactions_pending_due, which orders the questions
	// with a deadline the same way.
	if len(names) != 0 {
		t.Errorf("deadline indexes after every migration: %q, want none", names)
	}
	next, ok, err := s.NextDeadline(t.Context())
	if err != nil || !ok {
		t.Fatalf("NextDeadline: %v, %v", ok, err)
	}
	due, err := s.DueInteractions(t.Context(), next.Add(2*time.Minute), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 2 || due[0].ID != ids[1] || due[1].ID != ids[2] || !due[0].Deadline.Equal(next) {
		t.Errorf("due after the migration: %d, want the second and third (next deadline %v)", len(due), next)
	}
}

// TestPurgeMigrations upgrades a database made before 0006 and 0007: its
// answers have no idempotency key, the events get their index by
// interaction, and a purge uses it.
func TestPurgeMigrations(t *testing.T) {
	path := tempPath(t)
	s := open(t, path, nil)
	var ids []string
	for range 3 {
		in, _, _, err := s.CreateInteraction(t.Context(), newInteraction(t))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, in.ID)
	}
	if _, _, err := s.Resolve(t.Context(), ids[0], hitl.Transition{Status: hitl.StatusAnswered, Value: []byte(`"yes"`), By: "bob", Via: hitl.ChannelWeb}); err != nil {
		t.Fatal(err)
	}
	// A newer event, so that the answered one may be purged.
	if _, err := s.AppendEvent(t.Context(), &hitl.Event{Type: hitl.EventNotified, InteractionID: ids[1]}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	db := inspect(t, path)
	if _, err := db.Exec(`
		DELETE FROM schema_migrations WHERE version IN (6, 7); -- 0008 (actions) stays applied
		DROP INDEX events_interaction;
		DROP TABLE purge_state;
		ALTER TABLE interactions DROP COLUMN answer_key;`); err != nil {
		t.Fatalf("go back before 0006: %v", err)
	}
	db.Close()

	s = open(t, path, nil)
	in, err := s.Interaction(t.Context(), ids[0])
	if err != nil || in.Result == nil || in.Result.IdempotencyKey != "" || string(in.Result.Value) != `"yes"` {
		t.Fatalf("answer after the migration: %+v, %v; want it with no key", in, err)
	}
	var n int
	if err := inspect(t, path).QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'events_interaction'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("events_interaction: %d, %v; want the index", n, err)
	}
	got, err := s.PurgeEnded(t.Context(), hitl.Purge{EndedBefore: time.Now().Add(time.Hour)})
	if err != nil || len(got.IDs) != 1 || got.IDs[0] != ids[0] || got.Rows["events"] != 2 {
		t.Errorf("purge after the migration: %+v, %v; want %s and its 2 events", got, err, ids[0])
	}
}

// newInteraction returns a new free-text question.
func newInteraction(t *testing.T) *hitl.Interaction {
	t.Helper()
	in, err := hitl.NewInteraction(hitl.CreateRequest{Question: "q"}, hitl.Caller{Name: "agent"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return in
}
