package client_test

import (
	"context"
	"errors"
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

// testServer is a real hitl server over a real SQLite file.
type testServer struct {
	*httptest.Server
	Broker *broker.Broker
	Store  *sqlite.Store
	Path   string

	stopOnce sync.Once
}

// newTestServer starts a server over a new SQLite file in t.TempDir().
func newTestServer(t *testing.T) *testServer {
	t.Helper()
	return startTestServer(t, filepath.Join(t.TempDir(), "hitl.db"), "", nil)
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
	ts := &testServer{Server: httptest.NewUnstartedServer(h), Broker: b, Store: store, Path: path}
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

// Stop shuts the server down as hitl serve does: broker first (releasing
// long-polls), then HTTP, then the store. Safe to call twice.
func (ts *testServer) Stop() {
	ts.stopOnce.Do(func() {
		ts.Broker.Close()
		ts.Server.Close()
		ts.Store.Close()
	})
}

// Addr returns the host:port the server listens on.
func (ts *testServer) Addr() string { return ts.Listener.Addr().String() }

// newClient returns a client for base with its own transport, so idle
// connections do not leak between tests.
func newClient(t *testing.T, base string, opts *client.Options) *client.Client {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	if opts == nil {
		opts = &client.Options{}
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Transport: tr}
	}
	return client.New(base, opts)
}

// mustCreate creates an interaction and fails the test on error.
func mustCreate(t *testing.T, c *client.Client, req hitl.CreateRequest) *hitl.Interaction {
	t.Helper()
	in, created, err := c.Create(context.Background(), req)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if !created {
		t.Fatalf("create: created = false, want true")
	}
	return in
}

// waitFor polls cond every few milliseconds until it holds, failing the
// test after a generous bound.
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

// waitResult is what a Wait or Ask in a goroutine returned.
type waitResult struct {
	in  *hitl.Interaction
	err error
}

// receive returns the result sent on ch, failing the test after a bound.
func receive(t *testing.T, ch <-chan waitResult, d time.Duration) waitResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(d):
		t.Fatalf("no result after %s", d)
		return waitResult{}
	}
}
