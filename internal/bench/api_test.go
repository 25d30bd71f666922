package bench

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestAPIDropsLongIdleConnections: the API client reuses an idle
// connection, but dials again once one has been idle longer than maxIdle,
// before the server's idle timeout can close it under a request (a
// request sent as the server closes reads EOF).
func TestAPIDropsLongIdleConnections(t *testing.T) {
	t.Parallel()
	var dialed atomic.Int64
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{}`))
	}))
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dialed.Add(1)
		}
	}
	ts.Start()
	defer ts.Close()
	a := newAPI(&Server{URL: ts.URL}, 1)
	defer a.close()
	ctx := context.Background()
	call := func() {
		t.Helper()
		if status, _, err := a.roundTrip(ctx, "GET", "/", nil); err != nil || status != 200 {
			t.Fatalf("round trip: %d, %v", status, err)
		}
	}
	call()
	call()
	if n := dialed.Load(); n != 1 {
		t.Fatalf("two requests in a row: %d connections, want 1", n)
	}
	hc := <-a.idle
	hc.since = time.Now().Add(-maxIdle - time.Second)
	a.idle <- hc
	call()
	if n := dialed.Load(); n != 2 {
		t.Errorf("after the connection was idle longer than %s: %d connections, want 2", maxIdle, n)
	}
}

// TestAPIGivesUpOnASilentServer: a request whose response never comes
// fails once its timeout has passed, saying so, rather than holding the
// run for good.
func TestAPIGivesUpOnASilentServer(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			go func() { _, _ = io.Copy(io.Discard, c) }() // reads, never answers
		}
	}()
	a := newAPI(&Server{URL: "http://" + ln.Addr().String()}, 1)
	defer a.close()
	a.timeout = 200 * time.Millisecond
	began := time.Now()
	_, _, err = a.roundTrip(t.Context(), "GET", "/api/v1/interactions/x/wait", nil)
	if err == nil || !strings.Contains(err.Error(), "no response within 200ms") {
		t.Fatalf("round trip to a silent server: %v; want no response within 200ms", err)
	}
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("gave up after %s; want about its timeout", took)
	}
}
