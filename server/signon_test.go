package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/oidctest"
	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/oidc"
	"github.com/hitl-sh/hitl/server"
	"golang.org/x/time/rate"
)

// The people at the test provider: alice answers for ops, bob is an admin
// through platform, dave is in no mapped group, and erin's email is in
// another domain.
var ssoPeople = []oidctest.Person{
	{ID: "sub-alice", Username: "alice", Email: "alice@example.com", Name: "Alice Example", Groups: []string{"ops"}},
	{ID: "sub-bob", Username: "bob", Email: "bob@example.com", Name: "Bob Example", Groups: []string{"platform", "ops"}},
	{ID: "sub-dave", Username: "dave", Email: "dave@example.com", Name: "Dave Example", Groups: []string{"marketing"}},
	{ID: "sub-erin", Username: "erin", Email: "erin@elsewhere.example", Name: "Erin Elsewhere", Groups: []string{"ops"}},
}

// ssoEnv is a hitl server that signs people in through a real OpenID
// Provider on loopback.
type ssoEnv struct {
	OP   *oidctest.OP
	HITL *hitltest.Server
	Base string
}

// ssoClientID and ssoSecret are hitl's registration at the provider;
// another client is registered too, with the same redirect URL.
const (
	ssoClientID    = "hitl"
	ssoSecret      = "hitl-client-secret"
	otherClientID  = "other-app"
	otherSecret    = "other-client-secret"
	ssoSessionName = "hitl_session"
)

// startSSO starts the provider and a hitl server signing people in
// through it; change, if not nil, adjusts hitl's provider configuration.
func startSSO(t *testing.T, change func(*oidc.Config), auth ...func(*server.AuthOptions)) *ssoEnv {
	t.Helper()
	addr := hitltest.FreeAddr(t)
	base := "http://" + addr
	redirect := base + oidc.CallbackPath
	op := oidctest.Start(t, []oidctest.Client{
		{ID: ssoClientID, Secret: ssoSecret, RedirectURIs: []string{redirect}},
		{ID: otherClientID, Secret: otherSecret, RedirectURIs: []string{redirect}},
	}, ssoPeople...)
	cfg := oidc.Config{
		Issuer: op.Issuer, ClientID: ssoClientID, ClientSecret: ssoSecret, RedirectURL: redirect,
		Name:       "Example ID",
		GroupRoles: map[string]hitl.Role{"ops": hitl.RoleResponder, "platform": hitl.RoleAdmin},
	}
	if change != nil {
		change(&cfg)
	}
	prov, err := oidc.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	key := bytes.Repeat([]byte{7}, 32)
	ao := server.AuthOptions{SignOn: prov, SignOnKey: key, LoginRate: rate.Inf}
	for _, f := range auth {
		f(&ao)
	}
	srv := hitltest.Start(t, &hitltest.Options{Addr: addr, Server: &server.Options{Auth: ao}})
	return &ssoEnv{OP: op, HITL: srv, Base: base}
}

// start begins a sign-in in c and returns the provider's authorize URL.
func (e *ssoEnv) start(t *testing.T, c *http.Client) string {
	t.Helper()
	resp, err := c.Get(e.Base + "/login/oidc?next=/i/x")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("GET /login/oidc: got %s %s, want 303 to the provider", resp.Status, body)
	}
	return resp.Header.Get("Location")
}

// callback sends the provider's answer to hitl in c.
func (e *ssoEnv) callback(t *testing.T, c *http.Client, cb *url.URL) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(cb.String())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body)
}

// signIn signs username in, without a browser, and returns hitl's
// session cookie.
func (e *ssoEnv) signIn(t *testing.T, username string) *http.Cookie {
	t.Helper()
	c := oidctest.NewBrowserlessClient()
	cb := e.OP.LogIn(t, c, e.start(t, c), username)
	resp, body := e.callback(t, c, cb)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/i/x" {
		t.Fatalf("sign-in of %s: got %s to %q: %s; want 303 to /i/x", username, resp.Status, resp.Header.Get("Location"), body)
	}
	ck := sessionCookieOf(resp)
	if ck == nil {
		t.Fatalf("sign-in of %s: no session cookie", username)
	}
	return ck
}

// sessionCookieOf returns the session cookie resp sets, if any.
func sessionCookieOf(resp *http.Response) *http.Cookie {
	for _, ck := range resp.Cookies() {
		if ck.Name == ssoSessionName && ck.Value != "" {
			return ck
		}
	}
	return nil
}

// me is GET /api/v1/auth/me as the holder of ck.
func (e *ssoEnv) me(t *testing.T, ck *http.Cookie) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("GET", e.Base+"/api/v1/auth/me", nil)
	req.AddCookie(ck)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func TestSignOnCreatesUserWithGroupsAndRole(t *testing.T) {
	e := startSSO(t, nil)
	alice := e.signIn(t, "alice")
	status, me := e.me(t, alice)
	if status != http.StatusOK || me["name"] != "alice@example.com" || me["role"] != "responder" || !equalGroups(me["groups"], "ops") {
		t.Errorf("alice's /me: got %d %v; want alice@example.com, responder, [ops]", status, me)
	}
	u, err := e.HITL.Store.User(t.Context(), "alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if u.Issuer != e.OP.Issuer || u.Subject != "sub-alice" || u.Email != "alice@example.com" || u.PasswordHash != "" {
		t.Errorf("alice's user: got %+v; want the provider's issuer and subject, her email, no password", u)
	}
	bob := e.signIn(t, "bob")
	if _, me := e.me(t, bob); me["role"] != "admin" || !equalGroups(me["groups"], "platform", "ops") {
		t.Errorf("bob's /me: got %v; want admin (platform), groups [platform ops]", me)
	}
	// A password login is no way in for someone of the provider.
	resp := postJSON(t, e.Base+"/api/v1/auth/login", `{"username":"alice@example.com","password":""}`)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("password login of a provider's user: got %s, want 401", resp.Status)
	}
}

func TestSignOnGroupsRefreshAtEachSignIn(t *testing.T) {
	e := startSSO(t, nil)
	first := e.signIn(t, "bob")
	if _, me := e.me(t, first); me["role"] != "admin" {
		t.Fatalf("bob's first sign-in: got %v, want admin", me)
	}
	// The provider takes platform away: at the next sign-in bob is a
	// responder for ops only, in every session.
	e.OP.SetGroups("sub-bob", "ops")
	second := e.signIn(t, "bob")
	for _, ck := range []*http.Cookie{first, second} {
		if _, me := e.me(t, ck); me["role"] != "responder" || !equalGroups(me["groups"], "ops") {
			t.Errorf("bob after losing platform: got %v; want responder, [ops]", me)
		}
	}
	// Out of every mapped group: refused at the next sign-in.
	e.OP.SetGroups("sub-bob", "marketing")
	c := oidctest.NewBrowserlessClient()
	resp, body := e.callback(t, c, e.OP.LogIn(t, c, e.start(t, c), "bob"))
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "none of the groups allowed") || sessionCookieOf(resp) != nil {
		t.Errorf("bob in no mapped group: got %s, session %v: %s; want 403 naming the groups, no session", resp.Status, sessionCookieOf(resp), body)
	}
}

func TestSignOnDisabledUser(t *testing.T) {
	e := startSSO(t, nil)
	alice := e.signIn(t, "alice")
	if err := e.HITL.Store.SetUserDisabled(t.Context(), "alice@example.com", true); err != nil {
		t.Fatal(err)
	}
	if status, _ := e.me(t, alice); status != http.StatusUnauthorized {
		t.Errorf("a disabled user's session: got %d, want 401", status)
	}
	c := oidctest.NewBrowserlessClient()
	resp, body := e.callback(t, c, e.OP.LogIn(t, c, e.start(t, c), "alice"))
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "disabled") || sessionCookieOf(resp) != nil {
		t.Errorf("a disabled user signing in: got %s: %s; want 403 saying disabled, no session", resp.Status, body)
	}
}

func TestSignOnMethods(t *testing.T) {
	t.Run("password only", func(t *testing.T) {
		srv := hitltest.Start(t, &hitltest.Options{People: true})
		if got := getText(t, srv.URL+"/api/v1/auth/methods"); got != `{"password":true}` {
			t.Errorf("methods: got %s, want password only", got)
		}
		resp, err := http.Get(srv.URL + "/login/oidc")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "not set up") {
			t.Errorf("/login/oidc without a provider: got %s %s, want 404 saying so", resp.Status, body)
		}
		if page := getText(t, srv.URL+"/login"); strings.Contains(page, "Sign in with") || !strings.Contains(page, `name="password"`) {
			t.Errorf("login page without a provider: %s", page)
		}
	})
	t.Run("provider only", func(t *testing.T) {
		e := startSSO(t, nil, func(o *server.AuthOptions) { o.NoPasswords = true })
		if got := getText(t, e.Base+"/api/v1/auth/methods"); got != `{"password":false,"sign_on":{"name":"Example ID","url":"/login/oidc"}}` {
			t.Errorf("methods: got %s, want the provider alone", got)
		}
		if page := getText(t, e.Base+"/login"); !strings.Contains(page, "Sign in with Example ID") || strings.Contains(page, `name="password"`) {
			t.Errorf("login page with the provider alone: %s", page)
		}
		// Nobody is signed in yet, on loopback: still no local mode.
		if status, _ := e.me(t, &http.Cookie{Name: "x", Value: "y"}); status != http.StatusUnauthorized {
			t.Errorf("/me anonymously: got %d, want 401", status)
		}
		if _, err := e.HITL.Store.SignInUser(t.Context(), &hitl.User{Name: "zoe", Issuer: "x", Subject: "y", Groups: []string{}}); err != nil {
			t.Fatal(err)
		}
		resp := postJSON(t, e.Base+"/api/v1/auth/login", `{"username":"zoe","password":"whatever"}`)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("password login when turned off: got %s, want 403", resp.Status)
		}
	})
}

// getText returns the body of GET u, trimmed.
func getText(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return strings.TrimSpace(string(b))
}

// TestSignOnRefusals checks each way a sign-in is refused: the login page
// with the reason, the right status, and no session cookie.
func TestSignOnRefusals(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	tests := []struct {
		name   string
		change func(*oidc.Config)
		// run does the sign-in and returns hitl's last answer.
		run        func(t *testing.T, e *ssoEnv) (*http.Response, string)
		status     int
		wantReason string
		// signedIn is who signed in before the refusal, if anyone.
		signedIn int
	}{{
		name: "wrong state",
		run: func(t *testing.T, e *ssoEnv) (*http.Response, string) {
			c := oidctest.NewBrowserlessClient()
			cb := e.OP.LogIn(t, c, e.start(t, c), "alice")
			q := cb.Query()
			q.Set("state", "forged-"+q.Get("state"))
			cb.RawQuery = q.Encode()
			return e.callback(t, c, cb)
		},
		status: http.StatusUnauthorized, wantReason: "state mismatch",
	}, {
		name: "replayed code",
		run: func(t *testing.T, e *ssoEnv) (*http.Response, string) {
			c := oidctest.NewBrowserlessClient()
			start := e.start(t, c)
			saved := c.Jar.Cookies(mustURL(t, e.Base+"/login/oidc"))
			cb := e.OP.LogIn(t, c, start, "alice")
			if resp, body := e.callback(t, c, cb); resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("first use: got %s: %s", resp.Status, body)
			}
			// The same answer again, with the sign-in cookie it came with.
			replay := oidctest.NewBrowserlessClient()
			replay.Jar.SetCookies(mustURL(t, e.Base+"/login/oidc"), saved)
			return e.callback(t, replay, cb)
		},
		status: http.StatusUnauthorized, wantReason: "used already", signedIn: 1,
	}, {
		name: "ID token for another audience",
		change: func(cfg *oidc.Config) {
			// What hitl sends to the token endpoint is hitl's, but
			// something in between swaps in another client's
			// credentials: the ID token is then for that client.
			cfg.HTTPClient = &http.Client{Transport: swapClient{}}
		},
		run: func(t *testing.T, e *ssoEnv) (*http.Response, string) {
			c := oidctest.NewBrowserlessClient()
			authz := mustURL(t, e.start(t, c))
			q := authz.Query()
			q.Set("client_id", otherClientID)
			authz.RawQuery = q.Encode()
			return e.callback(t, c, e.OP.LogIn(t, c, authz.String(), "alice"))
		},
		status: http.StatusUnauthorized, wantReason: "audience",
	}, {
		name:   "expired ID token",
		change: func(cfg *oidc.Config) { cfg.Now = func() time.Time { return time.Now().Add(3 * time.Hour) } },
		run: func(t *testing.T, e *ssoEnv) (*http.Response, string) {
			c := oidctest.NewBrowserlessClient()
			return e.callback(t, c, e.OP.LogIn(t, c, e.start(t, c), "alice"))
		},
		status: http.StatusUnauthorized, wantReason: "expired",
	}, {
		name: "issuer mismatch",
		change: func(cfg *oidc.Config) {
			// The same provider, named otherly: its discovery document
			// states another issuer.
			cfg.Issuer = strings.Replace(cfg.Issuer, "127.0.0.1", "localhost", 1)
		},
		run: func(t *testing.T, e *ssoEnv) (*http.Response, string) {
			resp, err := oidctest.NewBrowserlessClient().Get(e.Base + "/login/oidc")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return resp, string(body)
		},
		status: http.StatusServiceUnavailable, wantReason: "did not match",
	}, {
		name:   "disallowed email domain",
		change: func(cfg *oidc.Config) { cfg.AllowedDomains = []string{"example.com"} },
		run: func(t *testing.T, e *ssoEnv) (*http.Response, string) {
			c := oidctest.NewBrowserlessClient()
			return e.callback(t, c, e.OP.LogIn(t, c, e.start(t, c), "erin"))
		},
		status: http.StatusForbidden, wantReason: "only people of example.com",
	}, {
		name: "no mapped group",
		run: func(t *testing.T, e *ssoEnv) (*http.Response, string) {
			c := oidctest.NewBrowserlessClient()
			return e.callback(t, c, e.OP.LogIn(t, c, e.start(t, c), "dave"))
		},
		status: http.StatusForbidden, wantReason: "none of the groups allowed",
	}, {
		name: "provider's error",
		run: func(t *testing.T, e *ssoEnv) (*http.Response, string) {
			c := oidctest.NewBrowserlessClient()
			e.start(t, c)
			return e.callback(t, c, mustURL(t, e.Base+oidc.CallbackPath+"?error=access_denied&error_description=The+user+said+no"))
		},
		status: http.StatusUnauthorized, wantReason: "The user said no",
	}, {
		name: "no sign-in cookie",
		run: func(t *testing.T, e *ssoEnv) (*http.Response, string) {
			c := oidctest.NewBrowserlessClient()
			cb := e.OP.LogIn(t, c, e.start(t, c), "alice")
			return e.callback(t, oidctest.NewBrowserlessClient(), cb)
		},
		status: http.StatusUnauthorized, wantReason: "not started in this browser",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turns.Parallel(t)
			e := startSSO(t, tt.change)
			resp, body := tt.run(t, e)
			if resp.StatusCode != tt.status {
				t.Errorf("status: got %s, want %d; page: %s", resp.Status, tt.status, body)
			}
			if !strings.Contains(body, "Sign-in refused") || !strings.Contains(body, tt.wantReason) {
				t.Errorf("page: got %s; want the refusal with %q", body, tt.wantReason)
			}
			if !strings.Contains(body, `href="/login/oidc"`) {
				t.Errorf("page: no way to start again: %s", body)
			}
			if ck := sessionCookieOf(resp); ck != nil {
				t.Errorf("a refused sign-in set a session cookie: %v", ck)
			}
			users, err := e.HITL.Store.Users(t.Context())
			if err != nil || len(users) != tt.signedIn {
				t.Errorf("users after a refused sign-in: got %d, %v; want %d", len(users), err, tt.signedIn)
			}
		})
	}
}

// swapClient is a transport that sends the token endpoint the other
// client's credentials instead of hitl's.
type swapClient struct{}

func (swapClient) RoundTrip(r *http.Request) (*http.Response, error) {
	if _, _, ok := r.BasicAuth(); ok && strings.HasSuffix(r.URL.Path, "/oauth/token") {
		r = r.Clone(r.Context())
		r.SetBasicAuth(otherClientID, otherSecret)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// postJSON posts body to u, anonymously.
func postJSON(t *testing.T, u, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(u, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// equalGroups reports whether v (a JSON array) holds exactly want.
func equalGroups(v any, want ...string) bool {
	list, ok := v.([]any)
	if !ok || len(list) != len(want) {
		return false
	}
	for i, g := range list {
		if g != want[i] {
			return false
		}
	}
	return true
}

// call makes a request as the holder of ck (or of the bearer token tok)
// and decodes the JSON answer into out, if given; it returns the status.
func (e *ssoEnv) call(t *testing.T, method, path string, ck *http.Cookie, tok, body string, out any) int {
	t.Helper()
	req, _ := http.NewRequest(method, e.Base+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if ck != nil {
		req.AddCookie(ck)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		_ = json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode
}

// TestSignOnGroupTargetsInInbox: through the inbox's HTTP API, a person
// from the provider sees, counts and answers the questions for their
// provider group and not the others; once the provider takes the group
// away, their next sign-in takes the questions away too.
func TestSignOnGroupTargetsInInbox(t *testing.T) {
	// People in no mapped group are responders here, so that alice stays
	// one when the provider moves her to security.
	e := startSSO(t, func(cfg *oidc.Config) { cfg.DefaultRole = hitl.RoleResponder })
	agent := e.HITL.Token(t, "build-bot", hitl.RoleAgent)
	ask := func(group string) string {
		var in struct {
			ID string `json:"interaction_id"`
		}
		body := `{"interaction_type":"approval","question":"For ` + group + `?","targets":{"groups":["` + group + `"]}}`
		if status := e.call(t, "POST", "/api/v1/interactions", nil, agent, body, &in); status != http.StatusCreated {
			t.Fatalf("ask: got %d", status)
		}
		return in.ID
	}
	forOps, forSecurity := ask("ops"), ask("security")

	alice := e.signIn(t, "alice")
	var list struct {
		Items []struct {
			ID string `json:"interaction_id"`
		} `json:"interactions"`
	}
	if status := e.call(t, "GET", "/api/v1/interactions?status=pending", alice, "", "", &list); status != http.StatusOK ||
		len(list.Items) != 1 || list.Items[0].ID != forOps {
		t.Errorf("alice's list: got %d %+v; want the question for ops alone", status, list)
	}
	var counts hitl.InteractionCounts
	if status := e.call(t, "GET", "/api/v1/interactions/counts?status=pending", alice, "", "", &counts); status != http.StatusOK || counts.Total != 1 {
		t.Errorf("alice's counts: got %d %+v; want 1", status, counts)
	}
	if status := e.call(t, "POST", "/api/v1/interactions/"+forSecurity+"/respond", alice, "", `{"value":true}`, nil); status != http.StatusNotFound {
		t.Errorf("alice answering the question for security: got %d, want 404", status)
	}
	var answered struct {
		Result struct {
			RespondedBy string `json:"responded_by"`
		} `json:"result"`
	}
	if status := e.call(t, "POST", "/api/v1/interactions/"+forOps+"/respond", alice, "", `{"value":true}`, &answered); status != http.StatusOK ||
		answered.Result.RespondedBy != "alice@example.com" {
		t.Errorf("alice answering the question for ops: got %d, by %q; want 200 by alice@example.com", status, answered.Result.RespondedBy)
	}

	// The provider moves alice from ops to security: at her next
	// sign-in, what is for ops is no longer hers, what is for security is.
	next := ask("ops")
	e.OP.SetGroups("sub-alice", "security")
	alice = e.signIn(t, "alice")
	if status := e.call(t, "GET", "/api/v1/interactions?status=pending", alice, "", "", &list); status != http.StatusOK ||
		len(list.Items) != 1 || list.Items[0].ID != forSecurity {
		t.Errorf("alice's list after moving to security: got %d %+v; want the question for security alone (not %s)", status, list, next)
	}
	for _, path := range []string{"/api/v1/interactions/" + next, "/api/v1/interactions/" + next + "/wait?timeout=0"} {
		if status := e.call(t, "GET", path, alice, "", "", nil); status != http.StatusNotFound {
			t.Errorf("GET %s after losing ops: got %d, want 404", path, status)
		}
	}
	for _, path := range []string{"/api/v1/interactions/" + next + "/respond", "/api/v1/interactions/" + next + "/claim"} {
		if status := e.call(t, "POST", path, alice, "", `{"value":true}`, nil); status != http.StatusNotFound {
			t.Errorf("POST %s after losing ops: got %d, want 404", path, status)
		}
	}
}

// TestSignOnLogout: logging out ends hitl's session and offers the
// provider's own logout, back to hitl's login page.
func TestSignOnLogout(t *testing.T) {
	e := startSSO(t, nil, func(o *server.AuthOptions) { o.PublicURL = "https://hitl.example.com" })
	ck := e.signIn(t, "alice")
	req, _ := http.NewRequest("POST", e.Base+"/logout", nil)
	req.Header.Set("Origin", e.Base)
	req.AddCookie(ck)
	resp, err := oidctest.NewBrowserlessClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login?signed_out=1" {
		t.Fatalf("logout: got %s to %q", resp.Status, resp.Header.Get("Location"))
	}
	if status, _ := e.me(t, ck); status != http.StatusUnauthorized {
		t.Errorf("the session after logout: got %d, want 401", status)
	}
	page := getText(t, e.Base+"/login?signed_out=1")
	want := e.OP.Issuer + "/end_session?client_id=hitl&amp;post_logout_redirect_uri=https%3A%2F%2Fhitl.example.com%2Flogin"
	if !strings.Contains(page, "You are signed out of hitl.") || !strings.Contains(page, want) {
		t.Errorf("the page after logout: %s\nwant the provider's logout %s", page, want)
	}
}

// TestSignOnAcrossReplicas: a sign-in started on one replica finishes on
// another (the state is in a cookie sealed with the key they share), and
// its answer cannot be used again on the first (the used state is in the
// shared database).
func TestSignOnAcrossReplicas(t *testing.T) {
	db := hitltest.PostgresDB(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addrA := ln.Addr().String()
	ln.Close()
	redirect := "http://" + addrA + oidc.CallbackPath
	op := oidctest.Start(t, []oidctest.Client{{ID: ssoClientID, Secret: ssoSecret, RedirectURIs: []string{redirect}}}, ssoPeople...)
	prov, err := oidc.New(oidc.Config{Issuer: op.Issuer, ClientID: ssoClientID, ClientSecret: ssoSecret, RedirectURL: redirect,
		GroupRoles: map[string]hitl.Role{"ops": hitl.RoleResponder}})
	if err != nil {
		t.Fatal(err)
	}
	auth := server.AuthOptions{SignOn: prov, SignOnKey: bytes.Repeat([]byte{5}, 32), LoginRate: rate.Inf}
	a := hitltest.Start(t, &hitltest.Options{DB: db, Addr: addrA, Server: &server.Options{Auth: auth}})
	b := hitltest.Start(t, &hitltest.Options{DB: db, Server: &server.Options{Auth: auth}})

	c := oidctest.NewBrowserlessClient()
	resp, err := c.Get(a.URL + "/login/oidc")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cb := op.LogIn(t, c, resp.Header.Get("Location"), "alice")
	state := c.Jar.Cookies(mustURL(t, a.URL+"/login/oidc"))

	// The provider's answer reaches replica b, with the sign-in cookie.
	atB := *cb
	atB.Host = mustURL(t, b.URL).Host
	other := oidctest.NewBrowserlessClient()
	other.Jar.SetCookies(mustURL(t, b.URL+"/login/oidc"), state)
	resp, err = other.Get(atB.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	ck := sessionCookieOf(resp)
	if resp.StatusCode != http.StatusSeeOther || ck == nil {
		t.Fatalf("callback on replica b: got %s, session %v", resp.Status, ck)
	}
	env := &ssoEnv{Base: a.URL}
	if status, me := env.me(t, ck); status != http.StatusOK || me["name"] != "alice@example.com" {
		t.Errorf("the session on replica a: got %d %v", status, me)
	}

	// The same answer again, on replica a.
	replay := oidctest.NewBrowserlessClient()
	replay.Jar.SetCookies(mustURL(t, a.URL+"/login/oidc"), state)
	resp, body := env.callback(t, replay, cb)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "used already") || sessionCookieOf(resp) != nil {
		t.Errorf("replay on replica a: got %s: %s; want 401, used already, no session", resp.Status, body)
	}
}

// TestSignOnEscalationAddsProviderGroup: an escalation step that adds a
// provider's group brings the question to the people the provider put in
// it.
func TestSignOnEscalationAddsProviderGroup(t *testing.T) {
	e := startSSO(t, nil)
	agent := e.HITL.Token(t, "build-bot", hitl.RoleAgent)
	var in struct {
		ID string `json:"interaction_id"`
	}
	body := `{"interaction_type":"approval","question":"Roll back?","timeout":600,"targets":{"users":["nobody"]},
		"escalation":[{"after":"1s","add_targets":{"groups":["ops"]}}]}`
	if status := e.call(t, "POST", "/api/v1/interactions", nil, agent, body, &in); status != http.StatusCreated {
		t.Fatalf("ask: got %d", status)
	}
	alice := e.signIn(t, "alice")
	if status := e.call(t, "GET", "/api/v1/interactions/"+in.ID, alice, "", "", nil); status != http.StatusNotFound {
		t.Fatalf("alice before the escalation: got %d, want 404", status)
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(20 * time.Second)
	for e.call(t, "GET", "/api/v1/interactions/"+in.ID, alice, "", "", nil) != http.StatusOK {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatal("alice (ops) never saw the question after its escalation to ops")
		}
	}
	var answered struct {
		Result struct {
			RespondedBy string `json:"responded_by"`
		} `json:"result"`
	}
	if status := e.call(t, "POST", "/api/v1/interactions/"+in.ID+"/respond", alice, "", `{"value":true}`, &answered); status != http.StatusOK ||
		answered.Result.RespondedBy != "alice@example.com" {
		t.Errorf("alice answering after the escalation: got %d by %q", status, answered.Result.RespondedBy)
	}
}
