package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestSignedRouteLookup: a request for a signed route's path gets its
// handler, a path the mux would clean gets the mux's redirect, and every
// other request none, without a lookup.
func TestSignedRouteLookup(t *testing.T) {
	m := newRouteMux()
	signed := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	m.HandleSigned("POST /slack/events", signed)
	m.HandleFunc("POST /api/v1/interactions", func(http.ResponseWriter, *http.Request) {})
	for _, c := range []struct {
		method, target string
		want           bool
	}{
		{"POST", "/slack/events", true},
		{"POST", "//slack/events", true}, // redirected, as before authentication
		{"POST", "/slack/./events", true},
		{"GET", "/slack/events", false}, // no signed GET: the main mux answers 405
		{"POST", "/api/v1/interactions", false},
		{"POST", "/slack/events/", false},
		{"GET", "/", false},
	} {
		got := m.signedRoute(httptest.NewRequest(c.method, c.target, nil)) != nil
		if got != c.want {
			t.Errorf("%s %s: signed %v, want %v", c.method, c.target, got, c.want)
		}
	}
}
