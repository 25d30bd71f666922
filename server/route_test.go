package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/turns"
)

// TestWrongMethodIs405 checks every route: a method it does not take is
// 405 with an Allow header listing those it does, as a JSON error; a path
// that no route has is 404.
func TestWrongMethodIs405(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	var in hitl.Interaction
	ts.mustDo(t, "POST", "/api/v1/interactions", map[string]any{"question": "Ship?"}, http.StatusCreated, &in)
	id := "/api/v1/interactions/" + in.ID
	get := []string{"GET", "HEAD"}
	cases := []struct {
		path   string
		method string
		allow  []string
	}{
		{"/api/v1/interactions", "DELETE", []string{"GET", "HEAD", "POST"}},
		{id, "POST", get},
		{id, "DELETE", get},
		{id + "/wait", "POST", get},
		{id + "/respond", "GET", []string{"POST"}},
		{id + "/respond", "PUT", []string{"POST"}},
		{id + "/cancel", "GET", []string{"POST"}},
		{"/ws", "POST", get},
		{"/api/v1/events", "POST", get},
		{"/api/human-feedback/submit", "GET", []string{"POST"}},
		{"/api/human-feedback/pending", "POST", get},
		{"/api/v1/agents/hitl/respond", "GET", []string{"POST"}},
		{"/api/v1/auth/login", "GET", []string{"POST"}},
		{"/api/v1/auth/logout", "GET", []string{"POST"}},
		{"/api/v1/auth/me", "POST", get},
		{"/login", "PUT", []string{"GET", "HEAD", "POST"}},
		{"/logout", "GET", []string{"POST"}},
		{"/login.css", "POST", get},
		{"/healthz", "POST", get},
		{"/readyz", "DELETE", get},
		{"/metrics", "POST", get},
		{"/", "POST", get},
		{"/assets/app.js", "POST", get},
		{id, "OPTIONS", get},
	}
	for _, tc := range cases {
		status, raw, header := ts.doHeader(t, tc.method, tc.path)
		if status != http.StatusMethodNotAllowed {
			t.Errorf("%s %s: %d %.200s, want 405", tc.method, tc.path, status, raw)
			continue
		}
		allow := strings.Split(header.Get("Allow"), ", ")
		slices.Sort(allow)
		if !slices.Equal(allow, tc.allow) {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.path, header.Get("Allow"), strings.Join(tc.allow, ", "))
		}
		var e apiError
		if err := json.Unmarshal(raw, &e); err != nil || e.Error.Code != "method_not_allowed" || !strings.Contains(e.Error.Message, tc.method) {
			t.Errorf("%s %s: body %s, want a method_not_allowed JSON error naming the method", tc.method, tc.path, raw)
		}
	}
	for _, path := range []string{"/api/v1/nothing", "/api/v1/interactions/" + in.ID + "/nothing", "/nothing"} {
		status, raw, _ := ts.doHeader(t, "GET", path)
		var e apiError
		if status != http.StatusNotFound || json.Unmarshal(raw, &e) != nil || e.Error.Code != hitl.ENOTFOUND {
			t.Errorf("GET %s: %d %s, want a 404 JSON error", path, status, raw)
		}
	}
}

// doHeader sends a request without a body and returns the status, body
// and headers of the response.
func (ts *testServer) doHeader(t *testing.T, method, path string) (int, []byte, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return resp.StatusCode, raw, resp.Header
}
