package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/server"
)

// testServer is a real hitl server on a random loopback port, over a real
// SQLite file.
type testServer struct {
	*httptest.Server
	Broker *broker.Broker
	Store  hitltest.Store
	API    *server.Server
	Path   string // the SQLite file

	stop func() // when set, what Stop does
}

// newTestServer starts a server over a new SQLite file in t.TempDir().
func newTestServer(t *testing.T) *testServer {
	t.Helper()
	return startTestServer(t, filepath.Join(t.TempDir(), "hitl.db"))
}

// startTestServer starts a server over the SQLite file at path (parked
// long-polls, as under hitl serve); it stops when the test ends, or
// earlier through Stop.
func startTestServer(t *testing.T, path string) *testServer {
	t.Helper()
	return newTestServerWith(t, &hitltest.Options{DB: hitltest.DB{Path: path}})
}

// newTestServerWith starts a server as hitltest.Start does with opts.
func newTestServerWith(t *testing.T, opts *hitltest.Options) *testServer {
	t.Helper()
	s := hitltest.Start(t, opts)
	return &testServer{Server: s.Server, Broker: s.Broker, Store: s.Store, API: s.API, Path: s.Path, stop: s.Stop}
}

// Stop shuts the server down as hitl serve does: broker first (releasing
// long-polls and streams), then HTTP, then the store. Safe to call twice.
func (ts *testServer) Stop() {
	if ts.stop != nil {
		ts.stop()
		return
	}
	ts.Broker.Close()
	ts.Server.Close()
	ts.Store.Close()
}

// do sends a request with an optional JSON body and returns the status and
// the raw response body.
func (ts *testServer) do(t *testing.T, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("marshal body: %v", err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, ts.URL+path, rd)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp.StatusCode, data
}

// mustDo is do that fails the test unless the status is want, and decodes
// the body into out when out is not nil.
func (ts *testServer) mustDo(t *testing.T, method, path string, body any, want int, out any) {
	t.Helper()
	got, data := ts.do(t, method, path, body)
	if got != want {
		t.Fatalf("%s %s: status %d, want %d; body %s", method, path, got, want, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, path, data, err)
		}
	}
}
