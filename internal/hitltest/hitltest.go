// Package hitltest starts real hitl servers and engines over SQLite files
// for the tests of other packages. It is for tests only.
package hitltest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/mcpserver"
	"github.com/hitl-sh/hitl/server"
	"github.com/hitl-sh/hitl/sqlite"
)

// Options configures Start; nil means a new SQLite file and any free
// loopback port.
type Options struct {
	// Path is the SQLite file; "" means a new one in t.TempDir().
	Path string
	// Addr is the address to listen on; "" means any free loopback port.
	Addr string
	// Wrap, if not nil, wraps the server's handler (outside the check of
	// its responses).
	Wrap func(http.Handler) http.Handler
	// NoValidation turns off the check of every response against the
	// OpenAPI document (see ValidateResponses), which is on by default.
	NoValidation bool
	// Server configures server.New; nil means its defaults.
	Server *server.Options
	// Listen, if not nil, wraps the loopback listener (under the parking
	// one), to set up each accepted connection.
	Listen func(net.Listener) net.Listener
}

// Server is a real hitl server (HTTP API and /mcp) over a real SQLite file,
// whose responses are checked against the OpenAPI document unless
// Options.NoValidation says not to.
type Server struct {
	*httptest.Server
	Broker *broker.Broker
	Store  *sqlite.Store
	API    *server.Server
	Path   string // the SQLite file

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
	path := opts.Path
	if path == "" {
		path = filepath.Join(t.TempDir(), "hitl.db")
	}
	store, b := open(t, path)
	// As hitl serve has it: users and tokens from the store, MCP at /mcp,
	// unless the test's server options say otherwise.
	var sopts server.Options
	if opts.Server != nil {
		sopts = *opts.Server
	}
	if sopts.Auth.Identities == nil {
		sopts.Auth.Identities = store
	}
	if sopts.MCP == nil {
		sopts.MCP = mcpserver.New(b, nil).Handler()
	}
	srv := server.New(b, &sopts)
	var h http.Handler = srv.Handler()
	if !opts.NoValidation {
		h = ValidateResponses(t, h) // its cleanup runs after Stop
	}
	if opts.Wrap != nil {
		h = opts.Wrap(h)
	}
	s := &Server{Server: httptest.NewUnstartedServer(h), Broker: b, Store: store, API: srv, Path: path, opts: *opts}
	if opts.Addr != "" {
		s.Listener.Close()
		ln, err := listenAgain(opts.Addr)
		if err != nil {
			b.Close()
			store.Close()
			t.Fatal(err)
		}
		s.Listener = ln
	}
	if opts.Listen != nil {
		s.Listener = opts.Listen(s.Listener)
	}
	// Long-polls are parked, as under hitl serve.
	s.Listener = srv.Listener(s.Listener)
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

// Stop shuts the server down as hitl serve does: broker first (releasing
// long-polls), then HTTP, then the store. Safe to call twice.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		s.Broker.Close()
		s.Server.Close()
		s.Store.Close()
	})
}

// Restart stops s if it still runs and starts a new server over the same
// SQLite file, at the same address, with the same options.
func (s *Server) Restart(t testing.TB) *Server {
	t.Helper()
	s.Stop()
	opts := s.opts
	opts.Path, opts.Addr = s.Path, s.Listener.Addr().String()
	return Start(t, &opts)
}

// StartBroker starts an in-process engine over a new SQLite file in
// t.TempDir(). It stops when the test ends.
func StartBroker(t testing.TB) *broker.Broker {
	t.Helper()
	store, b := open(t, filepath.Join(t.TempDir(), "hitl.db"))
	t.Cleanup(func() {
		b.Close()
		store.Close()
	})
	return b
}

// open opens the SQLite file at path, as hitl serve does, and starts a
// broker over it.
func open(t testing.TB, path string) (*sqlite.Store, *broker.Broker) {
	t.Helper()
	store, err := sqlite.Open(path, &sqlite.Options{Exclusive: true})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	b := broker.New(store, nil)
	if err := b.Start(context.Background()); err != nil {
		store.Close()
		t.Fatalf("start broker: %v", err)
	}
	return store, b
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
