package ui_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/auth"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/server"
	"github.com/hitl-sh/hitl/slack"
	"github.com/hitl-sh/hitl/sqlite"
	"golang.org/x/time/rate"
)

// hitlServer is a real hitl server over a SQLite file in a temp dir, with
// the Slack channel (talking to a fake Slack), behind a middleware that
// can break the WebSocket and the respond endpoint.
type hitlServer struct {
	*httptest.Server
	Broker *broker.Broker
	// IDs holds the users, tokens and sessions.
	IDs    hitl.Identities
	Slack  *fakeSlack
	faults *faults
	// token is the agent's API token once authentication is on; the
	// test's agent calls send it.
	token string
}

// Test users of a server with authentication on (serverOptions.auth).
const (
	alicePassword = "alice-correct-horse" // alice: responder
	bobPassword   = "bob-battery-staple"  // bob: responder, group ops
	carolPassword = "carol-admin-secret"  // carol: admin
)

// serverOptions configure newServerWith; the zero value is a server in
// local mode (no users: no login), as hitl serve starts.
type serverOptions struct {
	// auth adds the users alice, bob and carol and an agent token, so every
	// request needs credentials.
	auth bool
	// streamRecheck is how often live streams check their credentials;
	// 0 means the server's default (30 s).
	streamRecheck time.Duration
	// loginRate and loginBurst limit sign-ins per address; 0 means no
	// limit.
	loginRate  rate.Limit
	loginBurst int
	// slack is what flags and HITL_SLACK_* variables would set.
	slack slack.Settings
	// noSecretKey runs the Slack channel without a key to seal secrets.
	noSecretKey bool
	// push, email and webhooks run the Web Push and email channels and
	// the webhooks (channels_test.go).
	push, email, webhooks bool
}

func newServer(t *testing.T) *hitlServer {
	t.Helper()
	return newServerWith(t, serverOptions{})
}

func newServerWith(t *testing.T, o serverOptions) *hitlServer {
	t.Helper()
	store, err := sqlite.Open(filepath.Join(t.TempDir(), "hitl.db"), nil)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	srv := &hitlServer{IDs: store, Slack: newFakeSlack(t)}
	if o.auth {
		addUsers(t, store)
		srv.token = newToken(t, store, "build-bot", hitl.RoleAgent)
	}
	b := broker.New(store, nil)
	if err := b.Start(context.Background()); err != nil {
		t.Fatalf("start broker: %v", err)
	}
	var cipher *slack.Cipher
	if !o.noSecretKey {
		if cipher, err = slack.NewCipher(bytes.Repeat([]byte{7}, slack.KeySize)); err != nil {
			t.Fatal(err)
		}
	}
	sl, err := slack.New(b, store, &slack.Options{Identities: store, Settings: o.slack, Cipher: cipher, APIURL: srv.Slack.URL + "/"})
	if err != nil {
		t.Fatalf("new slack: %v", err)
	}
	if err := sl.Start(context.Background()); err != nil {
		t.Fatalf("start slack: %v", err)
	}
	loginRate, loginBurst := o.loginRate, o.loginBurst
	if loginRate == 0 {
		loginRate = rate.Inf
	}
	opts := &server.Options{Slack: sl, Auth: server.AuthOptions{
		Identities:    store,
		StreamRecheck: o.streamRecheck, LoginRate: loginRate, LoginBurst: loginBurst,
	}}
	addChannels(t, b, store, o, opts)
	f := &faults{}
	ts := httptest.NewUnstartedServer(f.wrap(hitltest.ValidateResponses(t, server.New(b, opts).Handler())))
	// Hijacked connections are the WebSockets; the test can cut them.
	ts.Config.ConnState = func(c net.Conn, state http.ConnState) {
		if state == http.StateHijacked {
			f.mu.Lock()
			f.sockets = append(f.sockets, c)
			f.mu.Unlock()
		}
	}
	ts.Start()
	srv.Server, srv.Broker, srv.faults = ts, b, f
	t.Cleanup(func() {
		b.Close()
		srv.Close()
		sl.Close()
		store.Close()
	})
	return srv
}

// addUsers adds alice, bob and carol, as hitl user add would.
func addUsers(t *testing.T, ids hitl.Identities) {
	t.Helper()
	for _, u := range []struct {
		name, password string
		groups         []string
		admin          bool
	}{
		{"alice", alicePassword, nil, false},
		{"bob", bobPassword, []string{"ops"}, false},
		{"carol", carolPassword, []string{"ops"}, true},
	} {
		hash, err := auth.HashPassword(u.password)
		if err != nil {
			t.Fatal(err)
		}
		if err := ids.CreateUser(context.Background(), &hitl.User{Name: u.name, Groups: u.groups, Admin: u.admin, PasswordHash: hash}); err != nil {
			t.Fatalf("create user %s: %v", u.name, err)
		}
	}
}

// newToken creates an API token, as hitl token create would, and returns
// its secret.
func newToken(t *testing.T, ids hitl.Identities, name string, role hitl.Role) string {
	t.Helper()
	secret, hash, prefix := auth.NewToken()
	tok := &hitl.Token{ID: auth.NewID(), Name: name, Role: role, Prefix: prefix, Hash: hash}
	if err := ids.CreateToken(context.Background(), tok); err != nil {
		t.Fatalf("create token %s: %v", name, err)
	}
	return secret
}
