package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/server"
	"github.com/hitl-sh/hitl/slack"
)

// slackServer is a hitl server with the Slack channel (not connected to
// Slack: no bot token) and authentication on: an admin token and a
// responder token.
type slackServer struct {
	url              string
	admin, responder string
	store            hitltest.Store
}

// newSlackServer starts a slackServer.
func newSlackServer(t *testing.T) *slackServer {
	t.Helper()
	return newChannelServer(t, func(t testing.TB, e *hitltest.Engine, opts *server.Options) {
		cipher, err := slack.NewCipher(bytes.Repeat([]byte{7}, slack.KeySize))
		if err != nil {
			t.Fatal(err)
		}
		sl, err := slack.New(e.Broker, e.Store, &slack.Options{Cipher: cipher, Identities: e.Store})
		if err != nil {
			t.Fatal(err)
		}
		if err := sl.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		e.OnClose(func() { sl.Close() })
		opts.Slack = sl
	})
}

// newChannelServer starts a server with the channel that configure starts
// and authentication on: an admin token and a responder token.
func newChannelServer(t *testing.T, configure func(testing.TB, *hitltest.Engine, *server.Options)) *slackServer {
	t.Helper()
	s := hitltest.Start(t, &hitltest.Options{Configure: configure})
	return &slackServer{url: s.URL, store: s.Store, admin: s.Token(t, "root", hitl.RoleAdmin), responder: s.Token(t, "bob", hitl.RoleResponder)}
}

func (ss *slackServer) call(t *testing.T, token, method, path string, body string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = bytes.NewBufferString(body)
	}
	req, err := http.NewRequest(method, ss.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

func TestSlackConfigRoutes(t *testing.T) {
	turns.Parallel(t)
	ss := newSlackServer(t)
	const path = "/api/human-feedback/slack/config"

	for _, tt := range []struct {
		name, token string
		want        int
	}{{"anonymous", "", http.StatusUnauthorized}, {"responder", ss.responder, http.StatusForbidden}} {
		if code, body := ss.call(t, tt.token, "GET", path, ""); code != tt.want {
			t.Errorf("GET as %s: got %d %s, want %d", tt.name, code, body, tt.want)
		}
		if code, body := ss.call(t, tt.token, "POST", path, `{"enabled":false}`); code != tt.want {
			t.Errorf("POST as %s: got %d %s, want %d", tt.name, code, body, tt.want)
		}
	}

	code, body := ss.call(t, ss.admin, "POST", path,
		`{"enabled":true,"bot_token":"xoxb-1111-2222-abcdefghijkl","app_token":"xapp-1-A1-3333-mnopqrstuvwx","channel_id":"C0123ABCD"}`)
	if code != http.StatusOK {
		t.Fatalf("POST as admin: got %d %s", code, body)
	}
	// The human_feedback contract's shape, masked.
	code, body = ss.call(t, ss.admin, "GET", path, "")
	if code != http.StatusOK {
		t.Fatalf("GET as admin: got %d %s", code, body)
	}
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"enabled": true, "bot_token": "xoxb-...ijkl", "app_token": "xapp-...uvwx", "channel_id": "C0123ABCD"}
	for k, v := range want {
		if !cmp.Equal(got[k], v) {
			t.Errorf("GET %s: got %v, want %v", k, got[k], v)
		}
	}
	// Masked values posted back keep the secrets.
	code, body = ss.call(t, ss.admin, "POST", path, `{"enabled":true,"bot_token":"xoxb-...ijkl","app_token":"xapp-...uvwx","channel_id":"C0123ABCD","delay_seconds":30}`)
	if code != http.StatusOK {
		t.Fatalf("POST masked values: got %d %s", code, body)
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got["bot_token"] != "xoxb-...ijkl" || got["delay_seconds"] != float64(30) {
		t.Errorf("after posting masked values: %v", got)
	}

	if code, body := ss.call(t, ss.admin, "POST", path, `{"channel_id":"general"}`); code != http.StatusBadRequest {
		t.Errorf("POST a bad channel: got %d %s, want 400", code, body)
	}
	if code, body := ss.call(t, ss.admin, "POST", path, `{"delay_seconds":"soon"}`); code != http.StatusBadRequest {
		t.Errorf("POST a delay that is not a number: got %d %s, want 400", code, body)
	}
}

func TestSlackTestRoute(t *testing.T) {
	turns.Parallel(t)
	ss := newSlackServer(t)
	const path = "/api/human-feedback/slack/test"
	code, body := ss.call(t, ss.admin, "POST", path, "")
	var res struct {
		Success bool   `json:"success"`
		Message string `json:"message"`
	}
	if code != http.StatusOK || json.Unmarshal(body, &res) != nil {
		t.Fatalf("POST test: got %d %s", code, body)
	}
	if res.Success || res.Message == "" {
		t.Errorf("test without a bot token: got %+v, want a failure that says why", res)
	}
	if code, _ := ss.call(t, ss.responder, "POST", path, ""); code != http.StatusForbidden {
		t.Errorf("test as a responder: got %d, want 403", code)
	}
}

func TestSlackRoutesWithoutSlack(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	if code, _ := ts.do(t, "GET", "/api/human-feedback/slack/config", nil); code != http.StatusNotFound {
		t.Errorf("GET config on a server without the Slack channel: got %d, want 404", code)
	}
}
