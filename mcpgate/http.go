package mcpgate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hitl-sh/hitl"
	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Route is one gated server that a Handler serves.
type Route struct {
	Gate     *Gate
	Upstream Upstream
}

// Handler serves gated servers over Streamable HTTP, each at its
// prefix+NAME (hitl serve: /mcp/gate/NAME), so many clients share one
// configuration. Every client session gets its own upstream session (a
// command's own process), bound to the caller that opened it: the
// questions it asks are that caller's, and another caller cannot use it.
type Handler struct {
	prefix string
	routes map[string]Route
	stderr io.Writer
	hc     *http.Client
	log    *slog.Logger

	mu       sync.Mutex
	sessions map[string]*httpSession
	stop     chan struct{}
	stopOnce sync.Once
}

// IdleTimeout is how long a session through a gated route lives without
// a request from its client (a client that vanished without ending it),
// unless a call in it is still waiting for a person.
const IdleTimeout = 30 * time.Minute

// httpSession is one client's session through a gated route.
type httpSession struct {
	route     string
	last      time.Time // the client's last request; guarded by Handler.mu
	busy      int       // requests being served; guarded by Handler.mu
	owner     string    // the caller's token info, "" without one
	transport *mcp.StreamableServerTransport
	cancel    context.CancelFunc
}

// NewHandler returns a Handler for routes under prefix ("/mcp/gate/").
// Commands' stderr goes to stderr; HTTP upstreams are reached with hc
// (nil: http.DefaultClient); log (nil discards) records sessions.
func NewHandler(prefix string, routes []Route, hc *http.Client, stderr io.Writer, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Handler{prefix: prefix, routes: map[string]Route{}, stderr: stderr, hc: hc, log: log, sessions: map[string]*httpSession{}, stop: make(chan struct{})}
	for _, r := range routes {
		h.routes[r.Upstream.Name] = r
	}
	go h.reap()
	return h
}

// reap ends the sessions idle for IdleTimeout, until Close.
func (h *Handler) reap() {
	t := time.NewTicker(IdleTimeout / 10)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case now := <-t.C:
			h.mu.Lock()
			idle := map[string]string{}
			for id, s := range h.sessions {
				if s.busy == 0 && now.Sub(s.last) > IdleTimeout {
					idle[id] = s.route
				}
			}
			h.mu.Unlock()
			for id, route := range idle {
				h.log.Info("mcp gate: idle session ended", "gate", route)
				h.end(id)
			}
		}
	}
}

// Close ends every session.
func (h *Handler) Close() {
	h.stopOnce.Do(func() { close(h.stop) })
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, s := range h.sessions {
		s.cancel()
		delete(h.sessions, id)
	}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, h.prefix)
	route, ok := h.routes[name]
	if !ok || strings.Contains(name, "/") {
		http.Error(w, "no gated MCP server here", http.StatusNotFound)
		return
	}
	owner := ""
	if ti := mcpauth.TokenInfoFromContext(r.Context()); ti != nil {
		owner = ti.UserID
	}
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			http.Error(w, "start a session with POST initialize", http.StatusMethodNotAllowed)
			return
		}
		s, err := h.open(r, name, route, owner)
		if err != nil {
			h.log.Warn("mcp gate: cannot reach the upstream", "upstream", route.Upstream.String(), "error", err)
			http.Error(w, "the gated MCP server cannot be reached", http.StatusBadGateway)
			return
		}
		h.serve(s, w, r)
		return
	}
	h.mu.Lock()
	s, ok := h.sessions[id]
	h.mu.Unlock()
	if !ok || s.route != name || s.owner != owner {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	switch r.Method {
	case http.MethodDelete:
		h.end(id)
		w.WriteHeader(http.StatusNoContent)
	case http.MethodGet, http.MethodPost:
		h.serve(s, w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// serve serves a client's request in its session, which is not idle
// while it lasts (a call waiting for a person is a request in progress).
func (h *Handler) serve(s *httpSession, w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	s.busy++
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		s.busy--
		s.last = time.Now()
		h.mu.Unlock()
	}()
	s.transport.ServeHTTP(w, r)
}

// open starts a session: the upstream's connection, and the gate between
// it and the client's. It lives until the client deletes it, the
// upstream ends, or the handler closes; its questions are asked as the
// caller of the request that opened it.
func (h *Handler) open(r *http.Request, name string, route Route, owner string) (*httpSession, error) {
	caller := hitl.CallerFrom(r.Context())
	caller.Channel = hitl.ChannelMCP
	ctx, cancel := context.WithCancel(hitl.WithCaller(context.WithoutCancel(r.Context()), caller))
	up, err := route.Upstream.Transport(h.hc, h.stderr).Connect(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	id := newSessionID()
	t := &mcp.StreamableServerTransport{SessionID: id}
	down, err := t.Connect(ctx)
	if err != nil {
		up.Close()
		cancel()
		return nil, err
	}
	s := &httpSession{route: name, owner: owner, transport: t, cancel: cancel, last: time.Now()}
	h.mu.Lock()
	h.sessions[id] = s
	h.mu.Unlock()
	h.log.Info("mcp gate: session opened", "gate", name)
	go func() {
		err := route.Gate.Serve(ctx, down, up)
		h.end(id)
		h.log.Info("mcp gate: session ended", "gate", name, "error", err)
	}()
	return s, nil
}

// end ends the session id.
func (h *Handler) end(id string) {
	h.mu.Lock()
	s, ok := h.sessions[id]
	delete(h.sessions, id)
	h.mu.Unlock()
	if ok {
		s.cancel()
	}
}

// newSessionID returns an unguessable session id.
func newSessionID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}
