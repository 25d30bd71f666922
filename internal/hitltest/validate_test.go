package hitltest_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/hitl-sh/hitl/internal/hitltest"
)

// recordingT is a testing.TB that keeps the failures and cleanups of
// ValidateResponses instead of acting on them.
type recordingT struct {
	testing.TB
	mu       sync.Mutex
	failures []string
	cleanups []func()
}

func (r *recordingT) Helper() {}

func (r *recordingT) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func (r *recordingT) Cleanup(fn func()) { r.cleanups = append(r.cleanups, fn) }

// end runs the cleanups, as the end of a test does, and returns the
// failures.
func (r *recordingT) end() []string {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures
}

// reply returns a handler that answers with status, Content-Type ct, the
// headers given as pairs, and body.
func reply(status int, ct, body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if ct != "" {
			w.Header().Set("Content-Type", ct)
		}
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// parked returns a handler that takes the connection over and writes raw
// (an HTTP response) on it, as a parked long-poll does.
func parked(raw string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		nc, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		_, _ = io.WriteString(nc, raw)
		_ = nc.Close()
	}
}

// rawResponse renders a 200 response with a JSON body, as bytes on the
// wire.
func rawResponse(body string) string {
	return fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
}

const (
	errorBody  = `{"error":{"code":"invalid","message":"no"}}`
	healthBody = `{"status":"ok","version":"dev"}`
	// interactionBody is an interaction whose free-form fields have keys
	// of every shape (one with a dot, which the validator's paths write
	// in brackets).
	interactionBody = `{"interaction_id":"01968f5e-7a3b-7cde-8f01-23456789abcd","interaction_type":"action","question":"Run Bash?",` +
		`"options":[],"action":{"name":"Bash","args":{"<img src=x onerror=\"window.x=1\">":{"a.b":1},"command":"ls"}},"decisions":["approve"],"reject_requires_message":false,` +
		`"timeout":60,"deadline":"2026-05-05T12:34:56Z","on_timeout":"cancel","metadata":{"it's":["x"]},` +
		`"created_by":"local","created_via":"api","created_at":"2026-05-05T12:33:56Z","status":"pending"}`
)

// TestValidateResponses serves made-up responses through
// ValidateResponses and checks which ones it reports.
func TestValidateResponses(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name         string
		method, path string
		h            http.HandlerFunc
		want         string // in the one failure; "" for none
	}{
		{"documented", "GET", "/healthz", reply(200, "application/json", healthBody), ""},
		{"documented error", "GET", "/healthz", reply(400, "application/json", errorBody), ""},
		{"body off the schema", "GET", "/healthz", reply(200, "application/json", `{"status":"sick","version":"dev"}`), "GET /healthz: status 200"},
		{"free-form keys of any shape", "GET", "/api/v1/interactions/x", reply(200, "application/json", interactionBody), ""},
		{"field the document does not name", "GET", "/healthz", reply(200, "application/json", `{"status":"ok","version":"dev","uptime":3}`), "uptime"},
		{"error code not the status's", "GET", "/healthz", reply(503, "application/json", errorBody), "status 503"},
		{"undocumented status", "GET", "/healthz", reply(418, "application/json", errorBody), "status 418"},
		{"undocumented media type", "GET", "/healthz", reply(200, "text/plain", "ok"), "status 200"},
		{"required header missing", "POST", "/api/v1/interactions/x/respond",
			reply(429, "application/json", `{"error":{"code":"rate_limited","message":"slow down"}}`), "Retry-After"},
		{"required header there", "POST", "/api/v1/interactions/x/respond",
			reply(429, "application/json", `{"error":{"code":"rate_limited","message":"slow down"}}`, "Retry-After", "3"), ""},
		{"unknown route refused", "GET", "/api/v1/nope", reply(404, "application/json", `{"error":{"code":"not_found","message":"no route"}}`), ""},
		{"unknown method refused", "PUT", "/healthz",
			reply(405, "application/json", `{"error":{"code":"method_not_allowed","message":"use GET"}}`, "Allow", "GET, HEAD"), ""},
		{"unknown method refused without Allow", "PUT", "/healthz",
			reply(405, "application/json", `{"error":{"code":"method_not_allowed","message":"use GET"}}`), "no operation PUT /healthz"},
		{"unknown method refused in text", "PUT", "/healthz", reply(405, "text/plain; charset=utf-8", "Method Not Allowed\n", "Allow", "GET, HEAD"), "no operation PUT /healthz"},
		{"unknown route refused with another code", "GET", "/api/v1/nope", reply(404, "application/json", `{"error":{"code":"invalid","message":"no"}}`), "no operation GET /api/v1/nope"},
		{"unknown route served", "GET", "/api/v1/nope", reply(200, "application/json", `{}`), "no operation GET /api/v1/nope"},
		{"event stream body not read", "GET", "/api/v1/events", reply(200, "text/event-stream", "retry: 2000\n\n"), ""},
		{"metrics not checked", "GET", "/metrics", reply(200, "text/plain", "anything"), ""},
		{"MCP not checked", "POST", "/mcp", reply(299, "application/json", "{"), ""},
		{"parked response", "GET", "/api/v1/interactions/x/wait", parked(rawResponse(`{"interaction_id":"nope"}`)), "status 200"},
		{"parked health", "GET", "/healthz", parked(rawResponse(healthBody)), ""},
	} {
		// Each response is checked where the server runs, and where a
		// client gets it.
		t.Run(tt.name+"/server", func(t *testing.T) {
			t.Parallel()
			rt := &recordingT{TB: t}
			hs := httptest.NewServer(hitltest.ValidateResponses(rt, tt.h))
			roundTrip(t, hs.Client(), tt.method, hs.URL+tt.path)
			hs.Close()
			check(t, rt.end(), tt.want)
		})
		t.Run(tt.name+"/client", func(t *testing.T) {
			t.Parallel()
			rt := &recordingT{TB: t}
			hs := httptest.NewServer(tt.h)
			hc := &http.Client{Transport: hitltest.ValidatingTransport(rt, hs.Client().Transport)}
			roundTrip(t, hc, tt.method, hs.URL+tt.path)
			hs.Close()
			check(t, rt.end(), tt.want)
		})
	}
}

// roundTrip sends a request without a body and reads the response.
func roundTrip(t *testing.T, hc *http.Client, method, url string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// check compares the failures reported with the one wanted ("" for none).
func check(t *testing.T, failures []string, want string) {
	t.Helper()
	switch {
	case want == "" && len(failures) > 0:
		t.Errorf("reported %q, want nothing", failures)
	case want != "" && (len(failures) != 1 || !strings.Contains(failures[0], want)):
		t.Errorf("reported %q, want one failure with %q", failures, want)
	}
}
