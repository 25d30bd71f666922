package ui_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/server"
	"github.com/hitl-sh/hitl/slack"
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

// Passwords of the test people of a server with authentication on
// (serverOptions.auth; see hitltest.AddPeople).
const (
	alicePassword = hitltest.AlicePassword // alice: responder
	bobPassword   = hitltest.BobPassword   // bob: responder, group ops
	carolPassword = hitltest.CarolPassword // carol: admin
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
	// embedOrigins may embed <hitl-prompt> (embed_test.go).
	embedOrigins []string
}

func newServer(t *testing.T) *hitlServer {
	t.Helper()
	return newServerWith(t, serverOptions{})
}

func newServerWith(t *testing.T, o serverOptions) *hitlServer {
	t.Helper()
	srv := &hitlServer{Slack: newFakeSlack(t)}
	f := &faults{}
	loginRate, loginBurst := o.loginRate, o.loginBurst
	if loginRate == 0 {
		loginRate = rate.Inf
	}
	s := hitltest.Start(t, &hitltest.Options{
		People: o.auth,
		Server: &server.Options{Auth: server.AuthOptions{
			StreamRecheck: o.streamRecheck, LoginRate: loginRate, LoginBurst: loginBurst,
		}, EmbedOrigins: o.embedOrigins},
		Configure: func(t testing.TB, e *hitltest.Engine, opts *server.Options) {
			opts.Slack = startSlack(t, e, o, srv.Slack.URL)
			addChannels(t, e, o, opts)
		},
		Wrap: f.wrap,
		// Long-polls are not parked: the connections taken from the HTTP
		// server are the WebSockets, which the test can cut.
		NoParking: true,
		ConnState: f.track,
	})
	if o.auth {
		srv.token = s.Token(t, "build-bot", hitl.RoleAgent)
	}
	srv.Server, srv.Broker, srv.IDs, srv.faults = s.Server, s.Broker, s.Store, f
	return srv
}

// startSlack starts the Slack channel on e, talking to the fake Slack at
// apiURL, with o's settings.
func startSlack(t testing.TB, e *hitltest.Engine, o serverOptions, apiURL string) *slack.Service {
	t.Helper()
	var cipher *slack.Cipher
	if !o.noSecretKey {
		var err error
		if cipher, err = slack.NewCipher(bytes.Repeat([]byte{7}, slack.KeySize)); err != nil {
			t.Fatal(err)
		}
	}
	sl, err := slack.New(e.Broker, e.Store, &slack.Options{Identities: e.Store, Settings: o.slack, Cipher: cipher, APIURL: apiURL + "/"})
	if err != nil {
		t.Fatalf("new slack: %v", err)
	}
	if err := sl.Start(context.Background()); err != nil {
		t.Fatalf("start slack: %v", err)
	}
	e.OnClose(func() { sl.Close() })
	return sl
}

// addUsers adds alice, bob and carol, as hitl user add would.
func addUsers(t *testing.T, ids hitl.Identities) {
	t.Helper()
	hitltest.AddPeople(t, ids)
}

// newToken creates an API token, as hitl token create would, and returns
// its secret.
func newToken(t *testing.T, ids hitl.Identities, name string, role hitl.Role) string {
	t.Helper()
	return hitltest.Token(t, ids, name, role)
}
