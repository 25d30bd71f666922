package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/server"
)

// signedEcho is a Slack channel whose signed routes answer 200 with the
// path they served, as if every signature checked out; it has no
// configuration.
type signedEcho struct{ signedRoutes }

func (signedEcho) EventsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "signed "+r.URL.Path)
	})
}

func (e signedEcho) InteractivityHandler() http.Handler { return e.EventsHandler() }

// TestSignedRoutesSkipAuthentication checks that Slack's requests, which
// Slack signs, reach the channel without this server's credentials: with
// authentication on, in local mode from a host local mode does not answer,
// and cross-origin; other routes still ask for credentials.
func TestSignedRoutesSkipAuthentication(t *testing.T) {
	turns.Parallel(t)
	// The channel's answers are not the API's: they are not checked
	// against the OpenAPI document.
	serve := func(t *testing.T, withUsers bool) *hitltest.Server {
		t.Helper()
		s := hitltest.Start(t, &hitltest.Options{NoValidation: true, Server: &server.Options{Slack: signedEcho{}}})
		if withUsers {
			s.Token(t, "build-bot", hitl.RoleAgent)
		}
		return s
	}
	post := func(t *testing.T, url, host string, headers ...string) (int, string) {
		t.Helper()
		req, err := http.NewRequest("POST", url, strings.NewReader(`{"type":"event_callback"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}

	auth := serve(t, true)
	host := strings.TrimPrefix(auth.URL, "http://")
	for _, path := range []string{"/slack/events", "/slack/interactivity"} {
		if code, body := post(t, auth.URL+path, host); code != http.StatusOK || body != "signed "+path {
			t.Errorf("auth on, POST %s without credentials: %d %q, want the channel's 200", path, code, body)
		}
	}
	if code, body := post(t, auth.URL+"/api/v1/interactions", host); code != http.StatusUnauthorized {
		t.Errorf("auth on, POST /api/v1/interactions without credentials: %d %.200s, want 401", code, body)
	}

	local := serve(t, false)
	if code, body := post(t, local.URL+"/slack/events", "hitl.example.com"); code != http.StatusOK {
		t.Errorf("local mode, POST /slack/events for another host: %d %q, want the channel's 200", code, body)
	}
	if code, body := post(t, local.URL+"/api/v1/interactions", "hitl.example.com"); code != http.StatusForbidden {
		t.Errorf("local mode, POST /api/v1/interactions for another host: %d %.200s, want 403", code, body)
	}
	if code, body := post(t, local.URL+"/slack/interactivity", strings.TrimPrefix(local.URL, "http://"), "Sec-Fetch-Site", "cross-site"); code != http.StatusOK {
		t.Errorf("cross-origin POST /slack/interactivity: %d %q, want the channel's 200", code, body)
	}
}
