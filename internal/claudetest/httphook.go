package claudetest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// HTTPHookRequest is one request a HTTPHook received.
type HTTPHookRequest struct {
	// Method and Path are the request's method and path with query.
	Method, Path string
	// Header is the request's header.
	Header http.Header
	// Body is the request body.
	Body json.RawMessage
}

// HTTPHook is an endpoint for Claude Code's "type": "http" hooks: it
// records every request and answers with a fixed status and body.
type HTTPHook struct {
	*httptest.Server

	status int
	body   string

	mu       sync.Mutex
	requests []HTTPHookRequest
}

// NewHTTPHook starts an endpoint that answers every request with status and
// body (as JSON when it is not empty). It stops when the test ends.
func NewHTTPHook(t testing.TB, status int, body string) *HTTPHook {
	t.Helper()
	h := &HTTPHook{status: status, body: body}
	h.Server = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.Close)
	return h
}

func (h *HTTPHook) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	h.requests = append(h.requests, HTTPHookRequest{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body})
	h.mu.Unlock()
	if h.body != "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(h.status)
	io.WriteString(w, h.body)
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
