package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/server"
)

// readQuestion reads WebSocket messages until a hitl:question and returns
// its interaction id.
func readQuestion(t *testing.T, c *websocket.Conn) string {
	t.Helper()
	for {
		m := readWS(t, c)
		if m["type"] == "hitl:question" {
			id, _ := m["interaction_id"].(string)
			return id
		}
	}
}

// TestNonTargetNeverReceivesTheQuestion: a question for alice reaches
// alice over /ws and SSE, live and in the replay, and never bob, who gets
// 404 when answering it, as for an unknown id. An untargeted question sent after it is the
// marker: streams are ordered, so had bob been sent alice's question, it
// would come first.
func TestNonTargetNeverReceivesTheQuestion(t *testing.T) {
	turns.Parallel(t)
	ts := newAuthServer(t, server.AuthOptions{})

	aliceWS, _ := ts.dialWS(t, ts.alice)
	bobWS, _ := ts.dialWS(t, ts.bob)
	aliceSSE, _ := ts.openSSE(t, ts.alice, "")
	bobSSE, _ := ts.openSSE(t, ts.bob, "")

	secret := ts.ask(t, &hitl.Targets{Users: []string{"alice"}})
	marker := ts.ask(t, nil)

	if got := readQuestion(t, aliceWS); got != secret.ID {
		t.Errorf("alice's WebSocket: first question %s, want %s (hers)", got, secret.ID)
	}
	if got := readQuestion(t, aliceWS); got != marker.ID {
		t.Errorf("alice's WebSocket: second question %s, want the marker %s", got, marker.ID)
	}
	if got := readQuestion(t, bobWS); got != marker.ID {
		t.Errorf("bob's WebSocket: first question %s, want the marker %s, never alice's %s", got, marker.ID, secret.ID)
	}
	aliceSSE.expect(t, "hitl:question", secret.ID, 0)
	aliceSSE.expect(t, "hitl:question", marker.ID, 0)
	bobSSE.expect(t, "hitl:question", marker.ID, 0)

	// Answering: bob cannot see alice's question, so it is 404 for him, as
	// for an id that does not exist.
	resp, body := ts.call(t, ts.bob, "POST", "/api/v1/agents/hitl/respond", map[string]any{"interaction_id": secret.ID, "value": "yes"})
	var e apiError
	mustUnmarshal(t, body, &e)
	if want := fmt.Sprintf("interaction %q not found", secret.ID); resp.StatusCode != http.StatusNotFound || e.Error.Code != hitl.ENOTFOUND || e.Error.Message != want {
		t.Errorf("bob answers alice's question: %d %s, want 404 %s", resp.StatusCode, body, want)
	}

	// Replays: on connect, and resuming SSE from the start of the log.
	lateBob, _ := ts.dialWS(t, ts.bob)
	if got := readQuestion(t, lateBob); got != marker.ID {
		t.Errorf("bob's replay: first question %s, want only the marker %s", got, marker.ID)
	}
	resumed, _ := ts.openSSE(t, ts.bob, "0")
	resumed.expect(t, "hitl:question", marker.ID, 0)
	lateAlice, _ := ts.dialWS(t, ts.alice)
	if a, b := readQuestion(t, lateAlice), readQuestion(t, lateAlice); a != secret.ID || b != marker.ID {
		t.Errorf("alice's replay: %s then %s, want %s then %s", a, b, secret.ID, marker.ID)
	}

	// Alice answers; bob is not told about it either (hitl:resolved), and
	// the next thing he hears of is the next question he may see.
	resp, body = ts.call(t, ts.alice, "POST", "/api/v1/interactions/"+secret.ID+"/respond", map[string]any{"value": "yes"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("alice answers: %d %s", resp.StatusCode, body)
	}
	readWSType(t, aliceWS, "hitl:resolved", secret.ID)
	marker2 := ts.ask(t, nil)
	if m := readWS(t, bobWS); m["type"] != "hitl:question" || m["interaction_id"] != marker2.ID {
		t.Errorf("bob's WebSocket after alice answered: got %v, want the question %s", m, marker2.ID)
	}
	bobSSE.expect(t, "hitl:question", marker2.ID, 0)
}

// TestCrossOriginPostWithCookieRefused: a page on another site cannot use
// a logged-in person's cookie to answer (CSRF), while the same request
// from the inbox's own origin works.
func TestCrossOriginPostWithCookieRefused(t *testing.T) {
	turns.Parallel(t)
	ts := newAuthServer(t, server.AuthOptions{})
	in := ts.ask(t, nil)
	body := map[string]any{"value": "yes"}
	path := "/api/v1/interactions/" + in.ID + "/respond"

	resp, data := ts.call(t, ts.alice, "POST", path, body, "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site")
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(data), "cross-origin") {
		t.Errorf("cross-origin POST with alice's cookie: %d %s, want 403 cross-origin request refused", resp.StatusCode, data)
	}
	resp, data = ts.call(t, ts.alice, "POST", path, body, "Origin", "https://evil.example")
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-origin POST (Origin only): %d %s, want 403", resp.StatusCode, data)
	}
	if s := ts.status(t, in.ID); s != hitl.StatusPending {
		t.Fatalf("after the cross-origin POSTs the interaction is %s, want pending", s)
	}
	resp, data = ts.call(t, ts.alice, "POST", path, body, "Origin", ts.URL, "Sec-Fetch-Site", "same-origin")
	if resp.StatusCode != http.StatusOK {
		t.Errorf("same-origin POST with alice's cookie: %d %s, want 200", resp.StatusCode, data)
	}

	// Logging in is a POST too: no logging a victim into the attacker's
	// account from another site.
	resp, _ = ts.call(t, ts.anon, "POST", "/api/v1/auth/login", map[string]string{"username": "bob", "password": hitltest.BobPassword}, "Sec-Fetch-Site", "cross-site")
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site login: %d, want 403", resp.StatusCode)
	}
}

// TestLoginSessionLogout checks the cookie's attributes, /me, that the
// database keeps only a hash of the session secret, and logout.
func TestLoginSessionLogout(t *testing.T) {
	turns.Parallel(t)
	ts := newAuthServer(t, server.AuthOptions{SessionTTL: time.Hour})

	resp, body := ts.call(t, ts.anon, "POST", "/api/v1/auth/login", map[string]string{"username": "carol", "password": hitltest.CarolPassword})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login: %d %s", resp.StatusCode, body)
	}
	var me map[string]any
	mustUnmarshal(t, body, &me)
	if me["name"] != "carol" || me["role"] != "admin" || me["local_mode"] != false {
		t.Errorf("login response %s: want carol, admin, not local mode", body)
	}
	var ck *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "hitl_session" {
			ck = c
		}
	}
	if ck == nil {
		t.Fatalf("no session cookie: %v", resp.Header["Set-Cookie"])
	}
	if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Path != "/" || ck.Secure || ck.MaxAge != 3600 || time.Until(ck.Expires) > time.Hour+time.Minute {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Lax, Path=/, not Secure over plain HTTP, one hour", ck)
	}
	carol := actor{name: "carol", cookie: &http.Cookie{Name: ck.Name, Value: ck.Value}}
	_, body = ts.call(t, carol, "GET", "/api/v1/auth/me", nil)
	mustUnmarshal(t, body, &me)
	if me["name"] != "carol" || me["auth"] != "session" || me["groups"].([]any)[0] != "ops" {
		t.Errorf("me: %s, want carol by session in ops", body)
	}

	// The database holds a hash of the cookie, not the cookie.
	db := rawDB(t, ts.Path)
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sessions WHERE instr(CAST(hash AS TEXT), ?) > 0 OR instr(user_name, ?) > 0`, ck.Value, ck.Value).Scan(&n); err != nil || n != 0 {
		t.Errorf("sessions holding the cookie's secret: %d (%v), want 0", n, err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM sessions`).Scan(&n); err != nil || n != 3 {
		t.Errorf("sessions: %d rows (%v), want 3", n, err)
	}

	resp, _ = ts.call(t, carol, "POST", "/api/v1/auth/logout", nil)
	cleared := false
	for _, c := range resp.Cookies() {
		cleared = cleared || c.Name == "hitl_session" && c.MaxAge < 0
	}
	if resp.StatusCode != http.StatusOK || !cleared {
		t.Errorf("logout: %d, cookie cleared %v; want 200 and the cookie cleared", resp.StatusCode, cleared)
	}
	resp, body = ts.call(t, carol, "GET", "/api/v1/auth/me", nil)
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("me after logout: %d %s (WWW-Authenticate %q), want 401 with a Bearer challenge", resp.StatusCode, body, resp.Header.Get("WWW-Authenticate"))
	}

	// A token's caller.
	_, body = ts.call(t, ts.agent, "GET", "/api/v1/auth/me", nil)
	mustUnmarshal(t, body, &me)
	if me["name"] != "build-bot" || me["role"] != "agent" || me["auth"] != "token" {
		t.Errorf("me with the agent token: %s", body)
	}
}

// TestSecureCookieBehindHTTPS: with an https public URL, the session
// cookie is Secure.
func TestSecureCookieBehindHTTPS(t *testing.T) {
	turns.Parallel(t)
	ts := newAuthServer(t, server.AuthOptions{PublicURL: "https://hitl.example.com"})
	resp, _ := ts.call(t, ts.anon, "POST", "/api/v1/auth/login", map[string]string{"username": "alice", "password": hitltest.AlicePassword})
	for _, c := range resp.Cookies() {
		if c.Name == "hitl_session" && !c.Secure {
			t.Errorf("cookie %+v: want Secure", c)
		}
	}
}

// TestBruteForceLoginIsSlowed: after the burst (5), login attempts from one
// address get 429 with Retry-After, even with the right password; every
// failure is audited with the user name and never the password.
func TestBruteForceLoginIsSlowed(t *testing.T) {
	turns.Parallel(t)
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	// The two logins of newAuthServer use 2 of the 5.
	ts := newAuthServer(t, server.AuthOptions{Now: clock})
	const guess = "Tr0ub4dor&3-guess"
	for i := range 3 {
		resp, body := ts.call(t, ts.anon, "POST", "/api/v1/auth/login", map[string]string{"username": "alice", "password": guess})
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "invalid username or password") {
			t.Fatalf("attempt %d: %d %s, want 401", i+1, resp.StatusCode, body)
		}
	}
	resp, body := ts.call(t, ts.anon, "POST", "/api/v1/auth/login", map[string]string{"username": "alice", "password": hitltest.AlicePassword})
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("attempt after the burst: %d %s, want 429", resp.StatusCode, body)
	}
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || secs < 1 || secs > 12 {
		t.Errorf("Retry-After %q: want 1 to 12 seconds", resp.Header.Get("Retry-After"))
	}
	// The login form shares the limit.
	resp, _ = ts.call(t, ts.anon, "POST", "/login", "username=alice&password=x", "Content-Type", "application/x-www-form-urlencoded")
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("login form after the burst: %d, want 429", resp.StatusCode)
	}
	// One attempt comes back every 12 seconds.
	mu.Lock()
	now = now.Add(12 * time.Second)
	mu.Unlock()
	resp, body = ts.call(t, ts.anon, "POST", "/api/v1/auth/login", map[string]string{"username": "alice", "password": hitltest.AlicePassword})
	if resp.StatusCode != http.StatusOK {
		t.Errorf("after 12 s: %d %s, want 200", resp.StatusCode, body)
	}

	fails, err := ts.Store.LoginFailures(t.Context(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(fails) != 3 {
		t.Fatalf("audited %d failures, want 3: %+v", len(fails), fails)
	}
	for _, f := range fails {
		if f.Username != "alice" || f.Reason != "wrong password" || f.RemoteAddr != "127.0.0.1" {
			t.Errorf("audit row %+v: want alice, wrong password, from 127.0.0.1", f)
		}
	}
	logs := ts.Logs.String()
	if !strings.Contains(logs, "login failed") || !strings.Contains(logs, "username=alice") {
		t.Errorf("logs lack the failed login:\n%s", logs)
	}
	for _, secret := range []string{guess, hitltest.AlicePassword, hitltest.BobPassword} {
		if strings.Contains(logs, secret) {
			t.Errorf("a password is in the logs:\n%s", logs)
		}
	}
}

// TestUnknownUserAudited: a login for a name that does not exist fails
// like a wrong password, and is audited as such.
func TestUnknownUserAudited(t *testing.T) {
	turns.Parallel(t)
	ts := newAuthServer(t, server.AuthOptions{})
	resp, body := ts.call(t, ts.anon, "POST", "/api/v1/auth/login", map[string]string{"username": "mallory\x00\n", "password": "whatever1"})
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "invalid username or password") {
		t.Errorf("unknown user: %d %s, want 401 invalid username or password", resp.StatusCode, body)
	}
	fails, err := ts.Store.LoginFailures(t.Context(), 1)
	if err != nil || len(fails) != 1 || fails[0].Username != "mallory" || fails[0].Reason != "unknown user" {
		t.Errorf("audit: %+v, %v; want mallory (control characters dropped), unknown user", fails, err)
	}
}

// TestRespondIsRateLimited: while authentication is on, answers are
// limited per person, across all of their sessions, and per API token —
// not per address: every actor here comes from 127.0.0.1, as people behind
// one reverse proxy do.
func TestRespondIsRateLimited(t *testing.T) {
	turns.Parallel(t)
	ts := newAuthServer(t, server.AuthOptions{RespondRate: 0.001, RespondBurst: 2})
	aliceAgain := actor{name: "alice, second session", cookie: ts.login(t, "alice", hitltest.AlicePassword)}
	for i, c := range []struct {
		who  actor
		want int
	}{
		{ts.alice, http.StatusOK},
		{aliceAgain, http.StatusOK},
		{ts.alice, http.StatusTooManyRequests},
		{aliceAgain, http.StatusTooManyRequests}, // the same person
		{ts.bob, http.StatusOK},                  // the same address, another person
		{ts.admin, http.StatusOK},                // a token
		{ts.admin, http.StatusOK},
		{ts.admin, http.StatusTooManyRequests},
		{ts.bob, http.StatusOK},
		{ts.bob, http.StatusTooManyRequests},
	} {
		in := ts.ask(t, nil)
		resp, body := ts.call(t, c.who, "POST", "/api/v1/interactions/"+in.ID+"/respond", map[string]any{"value": "ok"})
		if resp.StatusCode != c.want {
			t.Errorf("answer %d, by %s: %d %s, want %d", i+1, c.who.name, resp.StatusCode, body, c.want)
		}
		if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
			t.Errorf("answer %d, by %s: 429 without Retry-After", i+1, c.who.name)
		}
	}
}

// TestRevokedTokenRefused: a revoked token is refused at once.
func TestRevokedTokenRefused(t *testing.T) {
	turns.Parallel(t)
	ts := newAuthServer(t, server.AuthOptions{})
	if resp, _ := ts.call(t, ts.agent, "GET", "/api/v1/interactions", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("before revoking: %d", resp.StatusCode)
	}
	if _, err := ts.IDs.RevokeTokens(t.Context(), "build-bot"); err != nil {
		t.Fatal(err)
	}
	for _, a := range []actor{ts.agent, {name: "garbage", token: "hitl_nope"}, {name: "basic", token: ""}} {
		headers := []string{}
		if a.name == "basic" {
			headers = []string{"Authorization", "Basic YWxpY2U6cHc="}
		}
		resp, body := ts.call(t, a, "GET", "/api/v1/interactions", nil, headers...)
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: %d %s, want 401 with WWW-Authenticate", a.name, resp.StatusCode, body)
		}
	}
}

// TestMCPSessionBoundToToken: an MCP session opened with one token cannot
// be used with another.
func TestMCPSessionBoundToToken(t *testing.T) {
	turns.Parallel(t)
	ts := newAuthServer(t, server.AuthOptions{})
	mcpHeaders := []string{"Accept", "application/json, text/event-stream", "Content-Type", "application/json"}
	resp, body := ts.call(t, ts.agent, "POST", "/mcp", mcpInitialize, mcpHeaders...)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %s, session %q", resp.StatusCode, body, sid)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	withSession := append(mcpHeaders, "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-06-18")
	if resp, body := ts.call(t, ts.otherAgent, "POST", "/mcp", list, withSession...); resp.StatusCode != http.StatusForbidden {
		t.Errorf("other-bot on build-bot's session: %d %s, want 403", resp.StatusCode, body)
	}
	if resp, body := ts.call(t, ts.agent, "POST", "/mcp", list, withSession...); resp.StatusCode != http.StatusOK {
		t.Errorf("build-bot on its session: %d %s, want 200", resp.StatusCode, body)
	}
}

// localServer is a server in local mode (no users or tokens) with a clock
// the test moves.
type localServer struct {
	*testServer
	mu  sync.Mutex
	now time.Time
}

func newLocalServer(t *testing.T, opts server.AuthOptions) *localServer {
	t.Helper()
	ls := &localServer{now: time.Now()}
	opts.Now = func() time.Time { ls.mu.Lock(); defer ls.mu.Unlock(); return ls.now }
	ls.testServer = newTestServerWith(t, &hitltest.Options{Server: &server.Options{Auth: opts}})
	return ls
}

// getHost sends GET path with the Host header set to host.
func (ls *localServer) getHost(t *testing.T, path, host string) int {
	t.Helper()
	req, err := http.NewRequest("GET", ls.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestLocalModeRefusesForeignHosts: without users or tokens, the server
// answers only requests addressed to loopback names, so a web page cannot
// reach it by pointing its own name at 127.0.0.1 (DNS rebinding).
func TestLocalModeRefusesForeignHosts(t *testing.T) {
	turns.Parallel(t)
	ls := newLocalServer(t, server.AuthOptions{PublicURL: "https://hitl.example.com/inbox"})
	_, port, _ := strings.Cut(strings.TrimPrefix(ls.URL, "http://"), ":")
	for host, want := range map[string]int{
		"127.0.0.1:" + port:        200,
		"localhost:" + port:        200,
		"LOCALHOST.:" + port:       200,
		"inbox.localhost:" + port:  200,
		"[::1]:" + port:            200,
		"127.1.2.3":                200,
		"hitl.example.com":         200, // the public URL's host
		"evil.example:" + port:     403,
		"evil.example":             403,
		"127.0.0.1.evil.example":   403,
		"hitl.example.com.evil.io": 403,
		"10.0.0.1:" + port:         403,
	} {
		if got := ls.getHost(t, "/api/v1/interactions", host); got != want {
			t.Errorf("Host %q: got %d, want %d", host, got, want)
		}
	}
	anyHost := newLocalServer(t, server.AuthOptions{AnyHost: true})
	if got := anyHost.getHost(t, "/api/v1/interactions", "evil.example"); got != 200 {
		t.Errorf("AnyHost, Host evil.example: got %d, want 200", got)
	}
}

// TestLocalModeEndsWithTheFirstToken: a server started without users or
// tokens needs credentials as soon as one exists (made by the hitl CLI,
// perhaps while it runs), once it has looked again.
func TestLocalModeEndsWithTheFirstToken(t *testing.T) {
	turns.Parallel(t)
	ls := newLocalServer(t, server.AuthOptions{})
	var me map[string]any
	ls.mustDo(t, "GET", "/api/v1/auth/me", nil, http.StatusOK, &me)
	if me["name"] != "local" || me["role"] != "admin" || me["local_mode"] != true {
		t.Errorf("me in local mode: %v", me)
	}
	token := hitltest.Token(t, ls.Store, "build-bot", hitl.RoleAgent)
	ls.mu.Lock()
	ls.now = ls.now.Add(2 * time.Second)
	ls.mu.Unlock()
	if status, body := ls.do(t, "GET", "/api/v1/interactions", nil); status != http.StatusUnauthorized {
		t.Errorf("without credentials once a token exists: %d %s, want 401", status, body)
	}
	req, _ := http.NewRequest("GET", ls.URL+"/api/v1/auth/me", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&me); err != nil || me["name"] != "build-bot" || me["local_mode"] != false {
		t.Errorf("me with the token: %v, %v", me, err)
	}
	// Loopback no longer matters: credentials do.
	if got := ls.getHost(t, "/healthz", "evil.example"); got != 200 {
		t.Errorf("/healthz for any host once authentication is on: got %d, want 200", got)
	}
}

// TestPublicMetrics: with PublicMetrics, /metrics needs no credentials.
func TestPublicMetrics(t *testing.T) {
	turns.Parallel(t)
	ts := newAuthServer(t, server.AuthOptions{PublicMetrics: true})
	if resp, _ := ts.call(t, ts.anon, "GET", "/metrics", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("/metrics anonymously: %d, want 200", resp.StatusCode)
	}
}
