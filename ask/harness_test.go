package ask_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/server"
	"github.com/hitl-sh/hitl/sqlite"
)

// env is one way an agent reaches the engine: in process, or over HTTP.
type env struct {
	name   string
	agent  hitl.Service   // what the helpers under test are given
	person hitl.Service   // answers on the web channel
	broker *broker.Broker // the engine behind both
}

// newEnvs returns both ways, each over its own SQLite file.
func newEnvs(t *testing.T) []env {
	t.Helper()
	local := startEngine(t, filepath.Join(t.TempDir(), "hitl.db"))
	ts := startTestServer(t, filepath.Join(t.TempDir(), "hitl.db"), "", nil)
	return []env{
		{name: "engine", agent: local, person: asPerson{local}, broker: local},
		{name: "http", agent: newClient(t, ts.URL, nil), person: newClient(t, ts.URL, &client.Options{Channel: hitl.ChannelWeb}), broker: ts.Broker},
	}
}

// asPerson answers and cancels on the engine as a person on the web inbox.
type asPerson struct{ *broker.Broker }

func (p asPerson) Respond(ctx context.Context, id string, v json.RawMessage) (*hitl.Interaction, error) {
	return p.Broker.Respond(hitl.WithCaller(ctx, hitl.Caller{Name: "alice", Channel: hitl.ChannelWeb}), id, v)
}

func (p asPerson) Cancel(ctx context.Context, id string, reason string) (*hitl.Interaction, error) {
	return p.Broker.Cancel(hitl.WithCaller(ctx, hitl.Caller{Name: "alice", Channel: hitl.ChannelWeb}), id, reason)
}

// startEngine starts an in-process engine over the SQLite file at path.
func startEngine(t *testing.T, path string) *broker.Broker {
	t.Helper()
	store, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	b := broker.New(store, nil)
	if err := b.Start(context.Background()); err != nil {
		store.Close()
		t.Fatalf("start broker: %v", err)
	}
	t.Cleanup(func() {
		b.Close()
		store.Close()
	})
	return b
}

// testServer is a real hitl server over a real SQLite file.
type testServer struct {
	*httptest.Server
	Broker *broker.Broker
	Store  *sqlite.Store

	stopOnce sync.Once
}

// startTestServer starts a server over the SQLite file at path, listening
// on addr ("" for any free loopback port). wrap, if not nil, wraps the
// server's handler. The server stops when the test ends, or through Stop.
func startTestServer(t *testing.T, path, addr string, wrap func(http.Handler) http.Handler) *testServer {
	t.Helper()
	store, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	b := broker.New(store, nil)
	if err := b.Start(context.Background()); err != nil {
		store.Close()
		t.Fatalf("start broker: %v", err)
	}
	var h http.Handler = server.New(b, nil).Handler()
	if wrap != nil {
		h = wrap(h)
	}
	ts := &testServer{Server: httptest.NewUnstartedServer(h), Broker: b, Store: store}
	if addr != "" {
		ts.Listener.Close()
		ts.Listener = listenAgain(t, addr)
	}
	ts.Start()
	t.Cleanup(ts.Stop)
	return ts
}

// listenAgain listens on addr, retrying briefly while the port is still
// held by a server that is closing.
func listenAgain(t *testing.T, addr string) net.Listener {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		ln, err := net.Listen("tcp", addr)
		if err == nil {
			return ln
		}
		if !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			t.Fatalf("listen on %s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond) // polling the port; nothing to wait on
	}
}

// Stop shuts the server down as hitl serve does: broker, HTTP, store.
func (ts *testServer) Stop() {
	ts.stopOnce.Do(func() {
		ts.Broker.Close()
		ts.Server.Close()
		ts.Store.Close()
	})
}

// newClient returns a client for base with its own transport.
func newClient(t *testing.T, base string, opts *client.Options) *client.Client {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	if opts == nil {
		opts = &client.Options{}
	}
	opts.HTTPClient = &http.Client{Transport: tr}
	return client.New(base, opts)
}

// waitFor polls cond until it holds, failing the test after a bound.
func waitFor(t *testing.T, what string, cond func() bool) {
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

// waiting waits until an agent waits on exactly one pending interaction
// and returns it.
func (e env) waiting(t *testing.T) *hitl.Interaction {
	t.Helper()
	waitFor(t, "the agent to wait", func() bool { return e.broker.Waiting() == 1 })
	list, _, err := e.broker.List(context.Background(), hitl.ListFilter{Status: hitl.StatusPending})
	if err != nil {
		t.Fatalf("list pending: %v", err)
	}
	if len(list) != 1 {
		t.Fatalf("%d pending interactions, want 1", len(list))
	}
	return list[0]
}

// answer waits for the agent's question and answers it with value (JSON).
func (e env) answer(t *testing.T, value string) *hitl.Interaction {
	t.Helper()
	in := e.waiting(t)
	if _, err := e.person.Respond(context.Background(), in.ID, json.RawMessage(value)); err != nil {
		t.Fatalf("respond %s: %v", value, err)
	}
	return in
}

// result is what a helper running in a goroutine returned.
type result[T any] struct {
	v   T
	err error
}

// async runs fn in a goroutine and returns a channel with its result.
func async[T any](fn func() (T, error)) <-chan result[T] {
	ch := make(chan result[T], 1)
	go func() {
		v, err := fn()
		ch <- result[T]{v, err}
	}()
	return ch
}

// receive returns the result sent on ch, failing the test after a bound.
func receive[T any](t *testing.T, ch <-chan result[T]) result[T] {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("no result after 30s")
		return result[T]{}
	}
}

// signalHandler is a slog.Handler that signals on ch each time a record
// with message msg is logged.
type signalHandler struct {
	msg string
	ch  chan struct{}
}

func (h *signalHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *signalHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *signalHandler) WithGroup(string) slog.Handler            { return h }
func (h *signalHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		select {
		case h.ch <- struct{}{}:
		default:
		}
	}
	return nil
}
