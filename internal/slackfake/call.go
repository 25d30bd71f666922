package slackfake

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Call is one Web API call the fake received, accepted or not.
type Call struct {
	Method string         // such as "chat.postMessage"
	Token  string         // the token it came with
	Form   url.Values     // a form body's fields (empty for a JSON body)
	Body   map[string]any // a JSON body (views.open), or nil
}

// Blocks returns the call's blocks field as JSON text without HTML
// escapes (slack-go writes < as \u003c), for matching.
func (c Call) Blocks() string {
	var v any
	if err := json.Unmarshal([]byte(c.Form.Get("blocks")), &v); err != nil {
		return c.Form.Get("blocks")
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(b.String())
}

// record adds a call and wakes the waiters; it returns whether its token
// is accepted.
func (s *Server) record(c Call) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
	close(s.changed)
	s.changed = make(chan struct{})
	return s.tokens[c.Token]
}

// Calls returns the calls of method received so far, oldest first; every
// call when method is "".
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.matching(method, nil)
}

// matching returns the calls of method for which match (if not nil)
// holds. Callers hold mu.
func (s *Server) matching(method string, match func(Call) bool) []Call {
	var out []Call
	for _, c := range s.calls {
		if (method == "" || c.Method == method) && (match == nil || match(c)) {
			out = append(out, c)
		}
	}
	return out
}

// WaitFor waits until the fake has received n calls of method for which
// match (if not nil) holds, and returns all such calls so far. It fails
// the test after Bound.
func (s *Server) WaitFor(method string, n int, match func(Call) bool) []Call {
	s.t.Helper()
	deadline := time.NewTimer(Bound)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		got := s.matching(method, match)
		ch := s.changed
		s.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-ch:
		case <-deadline.C:
			s.t.Fatalf("waited %v for %d %s calls; got %d", Bound, n, method, len(got))
		}
	}
}

// newTS returns a new message timestamp, unique in this fake.
func (s *Server) newTS() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextTS++
	return fmt.Sprintf("1700000000.%06d", s.nextTS)
}
