package claudetest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// HTTPHookRequest is one request an HTTPHook received.
type HTTPHookRequest struct {
	// Method and Path are the request's method and path with query.
	Method, Path string
	// Header is the request's header.
	Header http.Header
	// Body is the request body.
	Body json.RawMessage
}

// HTTPHookReply is how an HTTPHook answers.
type HTTPHookReply struct {
	// Status is the HTTP status; 0 means 200.
	Status int
	// Body is the response body, sent as application/json when not empty.
	Body string
	// Hang makes the endpoint never answer (until the client gives up).
	Hang bool
}

// HTTPHook is an endpoint for Claude Code's "type": "http" hooks: it
// records every request and answers with a fixed HTTPHookReply.
type HTTPHook struct {
	*httptest.Server

	reply HTTPHookReply
	stop  chan struct{} // closed when the test ends, releasing hung requests

	mu       sync.Mutex
	requests []HTTPHookRequest
}

// NewHTTPHook starts an endpoint that answers every request with reply. It
// stops when the test ends.
func NewHTTPHook(t testing.TB, reply HTTPHookReply) *HTTPHook {
	t.Helper()
	h := &HTTPHook{reply: reply, stop: make(chan struct{})}
	h.Server = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(func() {
		close(h.stop)
		h.Close()
	})
	return h
}

func (h *HTTPHook) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	h.requests = append(h.requests, HTTPHookRequest{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body})
	h.mu.Unlock()
	if h.reply.Hang {
		select {
		case <-r.Context().Done():
		case <-h.stop:
		}
		return
	}
	if h.reply.Body != "" {
		w.Header().Set("Content-Type", "application/json")
	}
	status := h.reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	io.WriteString(w, h.reply.Body)
}

// Requests returns the requests received so far, in order.
func (h *HTTPHook) Requests() []HTTPHookRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]HTTPHookRequest(nil), h.requests...)
}

// HTTPHookConfig returns a "type": "http" hook object posting to url, with
// headers (values may name environment variables as $NAME or ${NAME}), the
// variables allowed in them, and a timeout in seconds when above 0.
func HTTPHookConfig(url string, headers map[string]string, allowedEnvVars []string, timeout int) map[string]any {
	m := map[string]any{"type": "http", "url": url}
	if headers != nil {
		m["headers"] = headers
	}
	if allowedEnvVars != nil {
		m["allowedEnvVars"] = allowedEnvVars
	}
	if timeout > 0 {
		m["timeout"] = timeout
	}
	return m
}
