// Package hitltest starts real hitl servers and engines, over SQLite files
// or PostgreSQL schemas, for the tests of other packages. It is for tests
// only.
package hitltest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/mcpserver"
	"github.com/hitl-sh/hitl/server"
)

// Options configures Start; nil means a new SQLite file and any free
// loopback port.
type Options struct {
	// DB is the database; the zero DB means a new SQLite file in
	// t.TempDir(). A SQLite file is held for this server alone, as hitl
	// serve holds it.
	DB DB
	// App names a PostgreSQL store's connections (application_name); its
	// event listener connects as App + " listener". "" leaves the default.
	App string
	// WrapStore, if not nil, wraps the store the broker runs on (to watch
	// its calls); Server.Store stays the store itself.
	WrapStore func(hitl.Store) hitl.Store
	// People adds alice, bob and carol (see AddPeople) before the server
	// starts, so that requests need credentials.
	People bool
	// Server configures server.New; nil means its defaults.
	Server *server.Options
	// Configure, if not nil, completes the server's options from the
	// engine the server runs on, before server.New: it starts the channels
	// (Slack, email, Web Push, webhooks) over e's broker and store, and
	// closes them through e.OnClose.
	Configure func(t testing.TB, e *Engine, opts *server.Options)
	// Prepare, if not nil, is called with the server after server.New and
	// before it serves: for settings that only tests of package server can
	// reach.
	Prepare func(*server.Server)
	// Addr is the address to listen on; "" means any free loopback port.
	Addr string
	// Wrap, if not nil, wraps the server's handler (outside the check of
	// its responses).
	Wrap func(http.Handler) http.Handler
	// NoValidation turns off the check of every response against the
	// OpenAPI document (see ValidateResponses), which is on by default.
	NoValidation bool
	// Listen, if not nil, wraps the loopback listener (under the parking
	// one), to set up each accepted connection.
	Listen func(net.Listener) net.Listener
	// NoParking serves long-polls in their handlers, as a server whose
	// Listener is not used does, instead of parking them: then the only
	// connections taken from the HTTP server are the WebSockets.
	NoParking bool
	// ConnState, if not nil, is the HTTP server's http.Server.ConnState.
	ConnState func(net.Conn, http.ConnState)
}

// Server is a real hitl server (HTTP API and /mcp) over a real database,
// whose responses are checked against the OpenAPI document unless
// Options.NoValidation says not to.
type Server struct {
	*httptest.Server
	Engine *Engine
	Broker *broker.Broker
	Store  Store
	API    *server.Server
	DB     DB
	Path   string // the SQLite file; "" on PostgreSQL

	opts     Options // as started, for Restart
	stopOnce sync.Once
}

// Start starts a server. It stops when the test ends, or earlier through
// Stop.
func Start(t testing.TB, opts *Options) *Server {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	db := opts.DB
	if db == (DB{}) {
		db = SQLiteDB(t)
	}
	e := openServerEngine(t, db, opts)
	t.Cleanup(e.Close)
	if opts.People {
		AddPeople(t, e.Store)
	}
	srv := server.New(e.Broker, serverOptions(t, e, opts))
	if opts.Prepare != nil {
		opts.Prepare(srv)
	}
	var h http.Handler = srv.Handler()
	if !opts.NoValidation {
		h = ValidateResponses(t, h) // its cleanup runs after Stop
	}
	if opts.Wrap != nil {
		h = opts.Wrap(h)
	}
	s := &Server{Server: httptest.NewUnstartedServer(h), Engine: e, Broker: e.Broker, Store: e.Store,
		API: srv, DB: db, Path: db.Path, opts: *opts}
	s.Config.ConnState = opts.ConnState
	if opts.Addr != "" {
		s.Listener.Close()
		ln, err := listenAgain(opts.Addr)
		if err != nil {
			t.Fatal(err)
		}
		s.Listener = ln
	}
	if opts.Listen != nil {
		s.Listener = opts.Listen(s.Listener)
	}
	if !opts.NoParking {
		// Long-polls are parked, as under hitl serve.
		s.Listener = srv.Listener(s.Listener)
	}
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

// openServerEngine opens db as hitl serve does and starts a broker over
// the store (wrapped if opts says so).
func openServerEngine(t testing.TB, db DB, opts *Options) *Engine {
	t.Helper()
	store, err := openStore(db, storeOptions{exclusive: true, app: opts.App})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	var run hitl.Store = store
	if opts.WrapStore != nil {
		run = opts.WrapStore(store)
	}
	return startEngine(t, store, run, nil, startReceipts(t, store))
}

// serverOptions returns the options of server.New: opts.Server completed,
// as hitl serve has it, with users and tokens from the store and MCP at
// /mcp unless they are set, then by opts.Configure.
func serverOptions(t testing.TB, e *Engine, opts *Options) *server.Options {
	t.Helper()
	var sopts server.Options
	if opts.Server != nil {
		sopts = *opts.Server
	}
	if sopts.Auth.Identities == nil {
		sopts.Auth.Identities = e.Store
	}
	if sopts.MCP == nil {
		sopts.MCP = mcpserver.New(e.Broker, &mcpserver.Options{Logger: sopts.Logger}).Handler()
	}
	if sopts.Receipts == nil && e.Receipts != nil {
		sopts.Receipts = e.Receipts
	}
	if opts.Configure != nil {
		opts.Configure(t, e, &sopts)
	}
	return &sopts
}

// Token creates an API token in the server's store and returns its
// secret.
func (s *Server) Token(t testing.TB, name string, role hitl.Role) string {
	t.Helper()
	return Token(t, s.Store, name, role)
}

// Login logs user in over the API and returns the session cookie.
func (s *Server) Login(t testing.TB, user, password string) *http.Cookie {
	t.Helper()
	return Login(t, s.URL, user, password)
}

// Stop shuts the server down as hitl serve does: broker first (releasing
// long-polls), then HTTP, then the channels and the store. Safe to call
// twice.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		s.Broker.Close()
		s.Server.Close()
		s.Engine.Close()
	})
}

// Restart stops s if it still runs and starts a new server over the same
// database, at the same address, with the same options (people are not
// added twice).
func (s *Server) Restart(t testing.TB) *Server {
	t.Helper()
	s.Stop()
	opts := s.opts
	opts.DB, opts.Addr, opts.People = s.DB, s.Listener.Addr().String(), false
	return Start(t, &opts)
}

// StartBroker starts an in-process engine over a new SQLite file in
// t.TempDir(). It stops when the test ends.
func StartBroker(t testing.TB) *broker.Broker {
	t.Helper()
	e := openServerEngine(t, SQLiteDB(t), &Options{})
	t.Cleanup(e.Close)
	return e.Broker
}

// listenAgain listens on addr, retrying briefly while the port is still
// held by a server that is closing.
func listenAgain(addr string) (net.Listener, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		ln, err := net.Listen("tcp", addr)
		if err == nil {
			return ln, nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			return nil, fmt.Errorf("listen on %s: %w", addr, err)
		}
		time.Sleep(20 * time.Millisecond) // polling the port; nothing to wait on
	}
}

// NewClient returns a client for base. Unless opts sets HTTPClient, it has
// its own transport, closed when the test ends, so idle connections do not
// leak between tests. opts is not modified.
func NewClient(t testing.TB, base string, opts *client.Options) *client.Client {
	t.Helper()
	var o client.Options
	if opts != nil {
		o = *opts
	}
	if o.HTTPClient == nil {
		tr := &http.Transport{}
		t.Cleanup(tr.CloseIdleConnections)
		o.HTTPClient = &http.Client{Transport: tr}
	}
	return client.New(base, &o)
}

// WaitFor polls cond every few milliseconds until it holds, failing the
// test after a generous bound.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(10 * time.Second)
	for !cond() {
		select {
		case <-tick.C:
		case <-timeout:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// LogSignal is a slog.Handler that sends on C, without blocking, each time
// a record with a given message is logged. It drops everything else.
type LogSignal struct {
	// C receives one value per matching record; it holds up to 100.
	C   chan struct{}
	msg string
}

// NewLogSignal returns a LogSignal for records with message msg.
func NewLogSignal(msg string) *LogSignal {
	return &LogSignal{C: make(chan struct{}, 100), msg: msg}
}

// Enabled reports true: every level is looked at.
func (h *LogSignal) Enabled(context.Context, slog.Level) bool { return true }

// WithAttrs returns h; attributes play no part.
func (h *LogSignal) WithAttrs([]slog.Attr) slog.Handler { return h }

// WithGroup returns h; groups play no part.
func (h *LogSignal) WithGroup(string) slog.Handler { return h }

// Handle signals on C if r's message is the one h waits for.
func (h *LogSignal) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		select {
		case h.C <- struct{}{}:
		default:
		}
	}
	return nil
}
