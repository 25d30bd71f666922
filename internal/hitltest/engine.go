package hitltest

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/postgres"
	"github.com/hitl-sh/hitl/postgres/pgtest"
	"github.com/hitl-sh/hitl/sqlite"
)

// Store is what both of hitl's stores are: the engine's store and those
// of the channels.
type Store interface {
	hitl.Store
	hitl.Identities
	hitl.NotificationStore
	hitl.PushStore
	hitl.SlackStore
	hitl.WebhookStore
}

var (
	_ Store = (*sqlite.Store)(nil)
	_ Store = (*postgres.Store)(nil)
)

// DB is the database of a test's hitl processes: a SQLite file, or a
// schema on the test PostgreSQL server (see pgtest). Processes opened on
// one DB share it, as replicas, or one after another, as restarts.
type DB struct {
	Path   string // the SQLite file, when Schema is ""
	Schema string // the PostgreSQL schema
}

// SQLiteDB returns a new SQLite file in t.TempDir().
func SQLiteDB(t testing.TB) DB {
	return DB{Path: filepath.Join(t.TempDir(), "hitl.db")}
}

// PostgresDB returns a new PostgreSQL schema, dropped when t ends; it
// skips t without a server (see pgtest).
func PostgresDB(t testing.TB) DB {
	t.Helper()
	return DB{Schema: pgtest.Name(t)}
}

// EngineOptions configure OpenEngine; nil means the defaults.
type EngineOptions struct {
	// Now is the clock of the store and the broker; nil means theirs.
	Now func() time.Time
	// Users are created in the store before the broker starts.
	Users []*hitl.User
}

// Engine is one hitl process without HTTP: a store over a DB and a
// broker over it. Channels under test are started on it.
type Engine struct {
	Store  Store
	Broker *broker.Broker

	once sync.Once
}

// OpenEngine opens db and starts a broker over it. Both close when t
// ends, or earlier through Close (a process ending).
func OpenEngine(t testing.TB, db DB, opts *EngineOptions) *Engine {
	t.Helper()
	if opts == nil {
		opts = &EngineOptions{}
	}
	store := OpenStore(t, db, opts.Now)
	for _, u := range opts.Users {
		if err := store.CreateUser(context.Background(), u); err != nil {
			store.Close()
			t.Fatalf("create user %s: %v", u.Name, err)
		}
	}
	e := &Engine{Store: store, Broker: broker.New(store, &broker.Options{Now: opts.Now})}
	if err := e.Broker.Start(context.Background()); err != nil {
		store.Close()
		t.Fatalf("start broker: %v", err)
	}
	t.Cleanup(e.Close)
	return e
}

// OpenStore opens db with the clock now (nil means the store's own). The
// caller closes it.
func OpenStore(t testing.TB, db DB, now func() time.Time) Store {
	t.Helper()
	var (
		store Store
		err   error
	)
	if db.Schema != "" {
		store, err = postgres.Open(context.Background(), pgtest.DSN(), &postgres.Options{Schema: db.Schema, Now: now, MaxConns: 4})
	} else {
		store, err = sqlite.Open(db.Path, &sqlite.Options{Now: now})
	}
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	return store
}

// Close closes the broker, then the store. Safe to call twice; close the
// channels started on the engine first.
func (e *Engine) Close() {
	e.once.Do(func() {
		e.Broker.Close()
		e.Store.Close()
	})
}
