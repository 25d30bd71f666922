package postgres_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/postgres"
	"github.com/hitl-sh/hitl/postgres/pgtest"
	"github.com/hitl-sh/hitl/storetest"
)

// open opens a store on schema, closed when the test ends.
func open(t testing.TB, schema string, opts *postgres.Options) *postgres.Store {
	t.Helper()
	if opts == nil {
		opts = &postgres.Options{}
	}
	opts.Schema = schema
	if opts.MaxConns == 0 {
		opts.MaxConns = 4
	}
	s, err := postgres.Open(context.Background(), pgtest.DSN(), opts)
	if err != nil {
		t.Fatalf("Open(schema %s): %v", schema, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) hitl.Store {
		return open(t, pgtest.Name(t), nil)
	})
}

func TestStoreReopen(t *testing.T) {
	storetest.RunReopen(t, func(t *testing.T) func(t *testing.T) hitl.Store {
		schema := pgtest.Name(t)
		return func(t *testing.T) hitl.Store {
			s, err := postgres.Open(context.Background(), pgtest.DSN(), &postgres.Options{Schema: schema, MaxConns: 4})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			return s
		}
	})
}

// TestMigrateConcurrently opens one new schema from several stores at
// once, as replicas starting together do: each migration runs once.
func TestMigrateConcurrently(t *testing.T) {
	t.Parallel()
	schema := pgtest.Name(t)
	const n = 5
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s, err := postgres.Open(context.Background(), pgtest.DSN(), &postgres.Options{Schema: schema, MaxConns: 2})
			if err == nil {
				s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open %d: %v", i, err)
		}
	}
	c := pgtest.Connect(t)
	var got int
	if err := c.QueryRow(t.Context(), `SELECT count(*) FROM `+schema+`.schema_migrations`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if want := len(files); got != want {
		t.Errorf("schema_migrations rows: got %d, want %d", got, want)
	}
}

// TestNewerSchemaRefused checks that a database migrated by a newer hitl
// is not touched.
func TestNewerSchemaRefused(t *testing.T) {
	t.Parallel()
	schema := pgtest.Name(t)
	open(t, schema, nil)
	pgtest.Exec(t, `INSERT INTO `+schema+`.schema_migrations (version, name, applied_at) VALUES (9999, '9999_future.sql', now())`)
	s, err := postgres.Open(context.Background(), pgtest.DSN(), &postgres.Options{Schema: schema})
	if err == nil {
		s.Close()
		t.Fatal("Open over a newer schema: got no error")
	}
}

// TestPingAfterClose checks that Ping, behind /readyz, fails once the
// store can no longer reach the database.
func TestPingAfterClose(t *testing.T) {
	t.Parallel()
	s := open(t, pgtest.Name(t), nil)
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	s.Close()
	if err := s.Ping(t.Context()); err == nil {
		t.Error("Ping after Close: got no error")
	}
}
