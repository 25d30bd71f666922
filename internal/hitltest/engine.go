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
	"github.com/hitl-sh/hitl/receipt"
	"github.com/hitl-sh/hitl/secret"
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
	// Receipts makes the broker sign approved actions' receipts, as a
	// server's does.
	Receipts bool
}

// Engine is one hitl process without HTTP: a store over a DB and a
// broker over it. Channels under test are started on it.
type Engine struct {
	Store  Store
	Broker *broker.Broker
	// Receipts signs approved actions' receipts, on a server's engine
	// (see Start); nil on others.
	Receipts *receipt.Service

	closers []func() // OnClose's, run in reverse
	once    sync.Once
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
	var receipts *receipt.Service
	if opts.Receipts {
		receipts = startReceipts(t, store)
	}
	e := startEngine(t, store, store, opts.Now, receipts)
	t.Cleanup(e.Close)
	return e
}

// startEngine starts a broker over run (store, or a wrapper of it) with
// the clock now, issuing receipts with receipts when it is not nil; it
// closes store and fails t if the broker cannot start.
func startEngine(t testing.TB, store Store, run hitl.Store, now func() time.Time, receipts *receipt.Service) *Engine {
	t.Helper()
	opts := &broker.Options{Now: now}
	if receipts != nil {
		opts.Receipts = receipts
	}
	e := &Engine{Store: store, Broker: broker.New(run, opts), Receipts: receipts}
	if err := e.Broker.Start(context.Background()); err != nil {
		store.Close()
		t.Fatalf("start broker: %v", err)
	}
	return e
}

// OpenStore opens db with the clock now (nil means the store's own). The
// caller closes it.
func OpenStore(t testing.TB, db DB, now func() time.Time) Store {
	t.Helper()
	store, err := openStore(db, storeOptions{now: now})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	return store
}

// storeOptions are how a process opens its store.
type storeOptions struct {
	now func() time.Time
	// exclusive holds a SQLite file for this store alone, as hitl serve
	// does.
	exclusive bool
	// app is the application_name of PostgreSQL connections; "" leaves
	// the server's default.
	app string
}

// openStore opens db.
func openStore(db DB, o storeOptions) (Store, error) {
	if db.Schema == "" {
		s, err := sqlite.Open(db.Path, &sqlite.Options{Now: o.now, Exclusive: o.exclusive})
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	dsn := pgtest.DSN()
	if o.app != "" {
		dsn = pgtest.WithParam(dsn, "application_name", o.app)
	}
	s, err := postgres.Open(context.Background(), dsn, &postgres.Options{Schema: db.Schema, Now: o.now, MaxConns: 4})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// OnClose adds f to what Close runs after the broker has closed and
// before the store does: the closing of a channel started on e. The last
// added runs first.
func (e *Engine) OnClose(f func()) {
	e.closers = append(e.closers, f)
}

// Close closes the broker, then what was added through OnClose, then the
// store. Safe to call twice.
func (e *Engine) Close() {
	e.once.Do(func() {
		e.Broker.Close()
		for i := len(e.closers) - 1; i >= 0; i-- {
			e.closers[i]()
		}
		e.Store.Close()
	})
}

// testSecretKey seals the receipt keys of test servers: the same on every
// start, so a restarted server opens the keys it stored.
var testSecretKey = make([]byte, secret.KeySize)

// startReceipts starts the receipt service of a test server over store,
// as hitl serve does, with keys sealed by testSecretKey.
func startReceipts(t testing.TB, store Store) *receipt.Service {
	t.Helper()
	c, err := secret.NewCipher(testSecretKey, hitl.ChannelReceipt)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	svc := receipt.New(store, &receipt.Options{Cipher: c, Issuer: "http://hitl.test"})
	if err := svc.Start(ctx); err != nil {
		store.Close()
		t.Fatalf("start receipts: %v", err)
	}
	return svc
}
