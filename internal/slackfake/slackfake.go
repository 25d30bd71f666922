// Package slackfake is a fake Slack for the tests of other packages: the
// Web API methods hitl calls (auth.test, chat.postMessage, chat.update,
// chat.postEphemeral, users.info, views.open, apps.connections.open) and
// a Socket Mode WebSocket server, answering as Slack documents them. It
// records every call, so tests can wait for one and look at what was sent.
// It is for tests only.
package slackfake

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Credentials and names the fake knows from the start.
const (
	BotToken = "xoxb-1111-2222-abcdefghijkl"   // accepted bot token; masked: xoxb-...ijkl
	AppToken = "xapp-1-A111-3333-mnopqrstuvwx" // accepted app token; masked: xapp-...uvwx
	Channel  = "C0TEST0001"                    // a channel that exists
	Team     = "hitl-test"                     // the workspace auth.test names
)

// Bound is how long the fake's waits last before they fail the test:
// generous, so a loaded machine slows a test down without failing it,
// and still an end, so a broken test does not hang.
const Bound = 60 * time.Second

// Options configures a fake; nil means the defaults.
type Options struct {
	// Channels are the channels that exist: chat.postMessage to any other
	// answers channel_not_found. Empty means every channel exists.
	Channels []string
}

// Server is a fake Slack. Its Web API is at URL + "/" + method once
// started, or through Client without a network.
type Server struct {
	// URL is the base URL of the Web API, with no trailing slash; empty
	// until Start.
	URL string

	t        testing.TB
	mux      *http.ServeMux
	channels map[string]bool

	mu       sync.Mutex
	srv      *httptest.Server
	calls    []Call
	changed  chan struct{} // closed and replaced on every call
	users    map[string]string
	tokens   map[string]bool
	nextTS   int
	failPost string

	sock sockets
}

// New starts a fake Slack on a loopback port; it stops when the test
// ends.
func New(t testing.TB, o *Options) *Server {
	s := NewUnstarted(t, o)
	s.Start()
	return s
}

// NewUnstarted returns a fake Slack that is not listening yet: Start
// starts it, and Client reaches it without a network (for tests in a
// synctest bubble, where time moves only when every goroutine is blocked
// on something the bubble controls, which a network is not).
func NewUnstarted(t testing.TB, o *Options) *Server {
	if o == nil {
		o = &Options{}
	}
	s := &Server{
		t: t, mux: http.NewServeMux(), channels: map[string]bool{},
		changed: make(chan struct{}),
		users:   map[string]string{},
		tokens:  map[string]bool{BotToken: true, AppToken: true},
		sock:    newSockets(),
	}
	for _, c := range o.Channels {
		s.channels[c] = true
	}
	s.routes()
	return s
}

// Start starts serving on a loopback port and sets URL; a fake already
// started is left as it is. The server and its Socket Mode connections
// are closed when the test ends.
func (s *Server) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return
	}
	s.srv = httptest.NewServer(s.mux)
	s.URL = s.srv.URL
	s.t.Cleanup(s.srv.Close)
	s.t.Cleanup(s.closeSockets) // runs first: Close does not wait for hijacked connections
}

// Client returns an HTTP client that reaches the fake's Web API in
// process, whatever the host in the URL. It carries no WebSocket.
func (s *Server) Client() *http.Client {
	return &http.Client{Transport: handlerTransport{s.mux}}
}

// handlerTransport answers requests by calling a handler directly.
type handlerTransport struct{ h http.Handler }

// RoundTrip serves r with the handler and returns what it wrote.
func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// SetUser makes users.info know the user id, with that email.
func (s *Server) SetUser(id, email string) {
	s.mu.Lock()
	s.users[id] = email
	s.mu.Unlock()
}

// AcceptToken makes the fake accept token as well, as a bot or an app
// token.
func (s *Server) AcceptToken(token string) {
	s.mu.Lock()
	s.tokens[token] = true
	s.mu.Unlock()
}

// FailPosts makes chat.postMessage answer with the error code from now
// on (such as "not_in_channel"); "" makes it post again.
func (s *Server) FailPosts(code string) {
	s.mu.Lock()
	s.failPost = code
	s.mu.Unlock()
}
