package ui_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
)

// faults breaks parts of the server on demand.
type faults struct {
	mu         sync.Mutex
	wsDown     bool
	sockets    []net.Conn
	failPosts  int
	failKeys   int      // Web Push key requests still to fail
	wsRequests int      // requests for /ws seen
	wsQueries  []string // their queries
	noResume   bool     // /ws is served as if it could not resume
	heldPosts  chan struct{}
}

// track is the HTTP server's ConnState: it keeps the hijacked
// connections, the WebSockets, for the test to cut.
func (f *faults) track(c net.Conn, state http.ConnState) {
	if state == http.StateHijacked {
		f.mu.Lock()
		f.sockets = append(f.sockets, c)
		f.mu.Unlock()
	}
}

func (f *faults) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		if r.URL.Path == "/ws" || r.URL.Path == "/ws/userinfo" {
			f.wsRequests++
			f.wsQueries = append(f.wsQueries, r.URL.RawQuery)
			if f.noResume {
				q := r.URL.Query()
				q.Del("after")
				r.URL.RawQuery = q.Encode()
			}
		}
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/api/v1/agents/hitl/respond" && f.heldPosts != nil:
			held := f.heldPosts
			f.mu.Unlock()
			holdResponse(w, r, next, held)
			return
		case (r.URL.Path == "/ws" || r.URL.Path == "/ws/userinfo") && f.wsDown:
			f.mu.Unlock()
			http.Error(w, "down for the test", http.StatusServiceUnavailable)
			return
		case r.URL.Path == "/api/v1/push/key" && f.failKeys > 0:
			f.failKeys--
			f.mu.Unlock()
			http.Error(w, "down for the test", http.StatusBadGateway)
			return
		case r.Method == http.MethodPost && r.URL.Path == "/api/v1/agents/hitl/respond" && f.failPosts > 0:
			f.failPosts--
			f.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":{"code":"unavailable","message":"down for the test"}}`)
			return
		}
		f.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// setWS closes every open WebSocket and refuses new ones while down.
func (f *faults) setWS(down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.wsDown = down
	if down {
		for _, c := range f.sockets {
			c.Close()
		}
		f.sockets = nil
	}
}

// holdResponse serves r into a recorder, so the request has its full
// effect at once, and sends the response only once held is closed.
func holdResponse(w http.ResponseWriter, r *http.Request, next http.Handler, held <-chan struct{}) {
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, r)
	select {
	case <-held:
	case <-r.Context().Done():
		return
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// holdPosts makes answers take effect at once but their responses wait
// until release is called.
func (f *faults) holdPosts() (release func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	held := make(chan struct{})
	f.heldPosts = held
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.heldPosts = nil
		close(held)
	}
}

// setNoResume makes the server ignore where a reconnecting page resumes
// from (as after its database was replaced): it replays everything.
func (f *faults) setNoResume(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.noResume = on
}

// wsQueryLog returns the queries of the requests for /ws seen.
func (f *faults) wsQueryLog() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.wsQueries...)
}

// wsCount returns how many requests for /ws the server has seen.
func (f *faults) wsCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.wsRequests
}

// failNextPosts makes the next n answers fail with 503.
func (f *faults) failNextPosts(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failPosts = n
}

// failNextKeys makes the next n requests for the Web Push key fail with
// 502, as a proxy that cannot reach the server answers.
func (f *faults) failNextKeys(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failKeys = n
}

// keysLeft returns how many Web Push key requests are still to fail.
func (f *faults) keysLeft() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failKeys
}
