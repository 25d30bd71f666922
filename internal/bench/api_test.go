package bench

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
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
