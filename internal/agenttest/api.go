package agenttest

import (
	"encoding/json"
	"net/http"
	"sync"
)

// Request is one model request a fake model API received.
type Request struct {
	// Path is the request's path and query.
	Path string
	// Header is the request's header.
	Header http.Header
	// Body is the request body as sent.
	Body json.RawMessage
	// Turn is the index of the scripted turn it was answered with; -1 for a
	// request outside the conversation (no tools offered).
	Turn int
}

// Recorder keeps what a fake model API received: the model requests, and
// the others as "METHOD path". Its zero value is ready; it is safe for
// concurrent use.
type Recorder struct {
	mu       sync.Mutex
	requests []Request
	other    []string
	waiters  []waiter
}

// waiter is a channel to close once n conversation requests have arrived.
type waiter struct {
	n  int
	ch chan struct{}
}

// Record records r, with its body, as a model request answered with turn
// (-1 outside the conversation), and wakes who waits for it (Received).
func (rec *Recorder) Record(r *http.Request, body json.RawMessage, turn int) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.requests = append(rec.requests, Request{Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body, Turn: turn})
	got, waiting := rec.conversation(), rec.waiters[:0]
	for _, w := range rec.waiters {
		if got >= w.n {
			close(w.ch)
		} else {
			waiting = append(waiting, w)
		}
	}
	rec.waiters = waiting
}

// Note records r as a request other than a model request.
func (rec *Recorder) Note(r *http.Request) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.other = append(rec.other, r.Method+" "+r.URL.RequestURI())
}

// Requests returns the model requests recorded so far, in order.
func (rec *Recorder) Requests() []Request {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]Request(nil), rec.requests...)
}

// Others returns the other requests recorded so far, in order, as
// "METHOD path".
func (rec *Recorder) Others() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]string(nil), rec.other...)
}

// Received returns a channel that is closed once n conversation requests
// (those that offer tools, Turn ≥ 0) have been recorded.
func (rec *Recorder) Received(n int) <-chan struct{} {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	ch := make(chan struct{})
	if rec.conversation() >= n {
		close(ch)
		return ch
	}
	rec.waiters = append(rec.waiters, waiter{n, ch})
	return ch
}

// conversation counts the conversation requests so far; rec.mu is held.
func (rec *Recorder) conversation() int {
	n := 0
	for _, r := range rec.requests {
		if r.Turn >= 0 {
			n++
		}
	}
	return n
}

// WriteJSON answers v, marshalled as JSON, with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
