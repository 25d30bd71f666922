package server_test

import (
	"context"

	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/server"
)

// chatOrigin is the embed origin of these tests: the chat page that
// embeds <hitl-prompt>.
const chatOrigin = "http://chat.example:8080"

// embedServer is an authServer whose pages of chatOrigin may embed the
// prompt, with a clock the test moves and credentials rechecked often.
type embedServer struct {
	*authServer
	skew atomic.Int64 // added to the clock, in ns
}

func newEmbedServer(t *testing.T) *embedServer {
	t.Helper()
	es := &embedServer{}
	now := func() time.Time { return time.Now().Add(time.Duration(es.skew.Load())) }
	es.authServer = startAuthServerWith(t, &hitltest.Options{DB: hitltest.SQLiteDB(t), Server: &server.Options{EmbedOrigins: []string{chatOrigin}}},
		server.AuthOptions{Now: now, StreamRecheck: 50 * time.Millisecond})
	return es
}

// mint mints an embed token as root and returns the secret and the ID.
func (es *embedServer) mint(t *testing.T, user string, ttl float64, sessions ...string) (secret, id string) {
	t.Helper()
	resp, data := es.call(t, es.admin, "POST", "/api/v1/embed-tokens", map[string]any{"user": user, "session_ids": sessions, "ttl": ttl})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("mint: %d %s", resp.StatusCode, data)
	}
	var got struct {
		ID, Token string
	}
	mustUnmarshal(t, data, &got)
	return got.Token, got.ID
}

// askIn creates an interaction of session as build-bot.
func (es *embedServer) askIn(t *testing.T, session string, targets *hitl.Targets) *hitl.Interaction {
	t.Helper()
	ctx := hitl.WithCaller(context.Background(), hitl.Caller{Name: "build-bot", Role: hitl.RoleAgent, Channel: hitl.ChannelAPI})
	in, _, err := es.Broker.Create(ctx, hitl.CreateRequest{Question: "Deploy build 1432?", Timeout: 600, SessionID: session, Targets: targets})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return in
}

// dialEmbed opens /ws/userinfo for sessions as the element does: the
// token as a subprotocol beside hitl-embed, from origin. It returns the
// connection, or the status of a refused handshake.
func (es *embedServer) dialEmbed(t *testing.T, token, origin string, sessions ...string) (*websocket.Conn, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), streamTimeout)
	defer cancel()
	q := make([]string, 0, len(sessions))
	for _, s := range sessions {
		q = append(q, "session_id="+s)
	}
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	opts := &websocket.DialOptions{HTTPHeader: h}
	if token != "" {
		opts.Subprotocols = []string{"hitl-embed", token}
	}
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(es.URL, "http")+"/ws/userinfo?"+strings.Join(q, "&"), opts)
	if err != nil {
		if resp == nil {
			t.Fatalf("dial: %v", err)
		}
		return nil, resp.StatusCode
	}
	if got := c.Subprotocol(); got != "hitl-embed" {
		t.Errorf("subprotocol %q, want hitl-embed", got)
	}
	c.SetReadLimit(1 << 20)
	t.Cleanup(func() { _ = c.CloseNow() })
	return c, resp.StatusCode
}

// replayIDs reads a connection's replay and returns the ids it showed.
func replayIDs(t *testing.T, c *websocket.Conn) []string {
	t.Helper()
	var ids []string
	for {
		m := readWSRaw(t, c)
		if m["type"] == "hitl:replay_done" {
			return ids
		}
		ids = append(ids, m["interaction_id"].(string))
	}
}

var embedTokenPattern = regexp.MustCompile(`^hitl_embed_[0-9A-Za-z]{40}$`)

// TestEmbedTokenMinting: only admins mint embed tokens, for an existing
// user and one to twenty sessions, for at most a day; the secret is shown
// once, listed never, and never logged.
func TestEmbedTokenMinting(t *testing.T) {
	turns.Parallel(t)
	es := newEmbedServer(t)
	body := map[string]any{"user": "alice", "session_ids": []string{"s1"}, "ttl": 600}
	for _, a := range []actor{es.alice, es.agent, es.anon} {
		if resp, data := es.call(t, a, "POST", "/api/v1/embed-tokens", body); resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s mints: %d %s, want 403 or 401", a.name, resp.StatusCode, data)
		}
	}
	for _, tc := range []struct {
		body map[string]any
		want int
	}{
		{map[string]any{"user": "nobody", "session_ids": []string{"s1"}}, http.StatusNotFound},
		{map[string]any{"user": "alice", "session_ids": []string{}}, http.StatusBadRequest},
		{map[string]any{"user": "alice", "session_ids": []string{""}}, http.StatusBadRequest},
		{map[string]any{"user": "alice", "session_ids": []string{"s1"}, "ttl": 86401}, http.StatusBadRequest},
		{map[string]any{"user": "alice", "session_ids": []string{"s1"}, "ttl": -1}, http.StatusBadRequest},
	} {
		if resp, data := es.call(t, es.admin, "POST", "/api/v1/embed-tokens", tc.body); resp.StatusCode != tc.want {
			t.Errorf("mint %v: %d %s, want %d", tc.body, resp.StatusCode, data, tc.want)
		}
	}
	before := time.Now()
	resp, data := es.call(t, es.admin, "POST", "/api/v1/embed-tokens", map[string]any{"user": "alice", "session_ids": []string{"s1", "s2"}})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("mint: %d %s", resp.StatusCode, data)
	}
	var tok struct {
		ID         string    `json:"id"`
		Token      string    `json:"token"`
		User       string    `json:"user"`
		SessionIDs []string  `json:"session_ids"`
		ExpiresAt  time.Time `json:"expires_at"`
	}
	mustUnmarshal(t, data, &tok)
	if !embedTokenPattern.MatchString(tok.Token) || tok.User != "alice" || len(tok.SessionIDs) != 2 {
		t.Errorf("minted %s", data)
	}
	if d := tok.ExpiresAt.Sub(before); d < 59*time.Minute || d > 61*time.Minute {
		t.Errorf("expires in %v, want the default hour", d)
	}
	_, list := es.call(t, es.admin, "GET", "/api/v1/embed-tokens?user=alice", nil)
	if !strings.Contains(string(list), tok.ID) || strings.Contains(string(list), tok.Token) {
		t.Errorf("list: %s; want the token's ID without its secret", list)
	}
	if strings.Contains(es.Logs.String(), tok.Token) {
		t.Error("the embed token's secret is in the log")
	}
}

// TestEmbedTokenScope: an embed token for alice and session s1 reads and
// answers the questions of s1 that alice may answer, through the
// element's routes alone; questions of other sessions, or meant for
// someone else, are not there for it, over HTTP or WebSocket.
func TestEmbedTokenScope(t *testing.T) {
	turns.Parallel(t)
	es := newEmbedServer(t)
	tok, _ := es.mint(t, "alice", 600, "s1")
	embed := actor{name: "alice's prompt", token: tok}
	mine := es.askIn(t, "s1", nil)
	other := es.askIn(t, "s2", nil)
	forBob := es.askIn(t, "s1", &hitl.Targets{Users: []string{"bob"}})

	// The live channel: s1 only, and only what alice may see.
	c, status := es.dialEmbed(t, tok, chatOrigin, "s1")
	if status != http.StatusSwitchingProtocols {
		t.Fatalf("dial: %d", status)
	}
	if got := replayIDs(t, c); len(got) != 1 || got[0] != mine.ID {
		t.Errorf("replay %v, want only %s", got, mine.ID)
	}
	for _, sessions := range [][]string{{"s2"}, {"s1", "s2"}, nil} {
		if _, status := es.dialEmbed(t, tok, chatOrigin, sessions...); status != http.StatusForbidden {
			t.Errorf("stream of sessions %v: %d, want 403", sessions, status)
		}
	}

	// Reading and answering.
	for _, id := range []string{other.ID, forBob.ID} {
		if resp, data := es.call(t, embed, "GET", "/api/v1/interactions/"+id, nil); resp.StatusCode != http.StatusNotFound {
			t.Errorf("read %s out of scope: %d %s, want 404", id, resp.StatusCode, data)
		}
		if resp, data := es.call(t, embed, "POST", "/api/v1/interactions/"+id+"/respond", map[string]any{"value": true}); resp.StatusCode != http.StatusNotFound {
			t.Errorf("answer %s out of scope: %d %s, want 404", id, resp.StatusCode, data)
		}
		if got := es.status(t, id); got != hitl.StatusPending {
			t.Errorf("%s is %s, want pending", id, got)
		}
	}
	for _, r := range [][2]string{
		{"GET", "/api/v1/interactions"},
		{"POST", "/api/v1/interactions"},
		{"GET", "/api/v1/interactions/" + mine.ID + "/wait"},
		{"POST", "/api/v1/interactions/" + mine.ID + "/cancel"},
		{"POST", "/api/v1/agents/hitl/respond"},
		{"GET", "/api/v1/embed-tokens"},
		{"GET", "/api/v1/auth/me"},
		{"GET", "/api/v1/events"},
	} {
		if resp, data := es.call(t, embed, r[0], r[1], map[string]any{}); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s %s with an embed token: %d %s, want 403", r[0], r[1], resp.StatusCode, data)
		}
	}
	if resp, data := es.call(t, embed, "POST", "/api/v1/interactions/"+mine.ID+"/respond", map[string]any{"value": true, "channel": "web"}); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("an embed token claiming the web channel: %d %s, want 400", resp.StatusCode, data)
	}
	resp, data := es.call(t, embed, "POST", "/api/v1/interactions/"+mine.ID+"/respond", map[string]any{"value": true}, "Origin", chatOrigin)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("answer in scope: %d %s", resp.StatusCode, data)
	}
	var in hitl.Interaction
	mustUnmarshal(t, data, &in)
	if in.Result == nil || in.Result.RespondedBy != "alice" || in.Result.Channel != hitl.ChannelEmbed {
		t.Errorf("result %+v, want alice on the embed channel", in.Result)
	}
	m := readWSType(t, c, "hitl:resolved", mine.ID)
	if m["responded_by"] != "alice" || m["channel"] != "embed" {
		t.Errorf("hitl:resolved %v", m)
	}
}

// TestEmbedTokenRefused: without a token, with a malformed one, an
// expired one or a revoked one, the prompt sees nothing and answers
// nothing; a revoked or expiring token ends the open stream.
func TestEmbedTokenRefused(t *testing.T) {
	turns.Parallel(t)
	es := newEmbedServer(t)
	q := es.askIn(t, "s1", nil)
	answer := func(a actor) int {
		resp, _ := es.call(t, a, "POST", "/api/v1/interactions/"+q.ID+"/respond", map[string]any{"value": true})
		return resp.StatusCode
	}
	for _, tok := range []string{"", "hitl_embed_short", "hitl_embed_" + strings.Repeat("A", 40)} {
		if _, status := es.dialEmbed(t, tok, chatOrigin, "s1"); status != http.StatusUnauthorized {
			t.Errorf("stream with token %q: %d, want 401", tok, status)
		}
		if tok != "" {
			if got := answer(actor{token: tok}); got != http.StatusUnauthorized {
				t.Errorf("answer with token %q: %d, want 401", tok, got)
			}
		}
	}

	// Revoked: the open stream ends (1008), and so does everything else.
	tok, id := es.mint(t, "alice", 600, "s1")
	c, _ := es.dialEmbed(t, tok, chatOrigin, "s1")
	replayIDs(t, c)
	if resp, data := es.call(t, es.admin, "DELETE", "/api/v1/embed-tokens/"+id, nil); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", resp.StatusCode, data)
	}
	wantClosed(t, c, "revoked", websocket.StatusPolicyViolation)
	if got := answer(actor{token: tok}); got != http.StatusUnauthorized {
		t.Errorf("answer with a revoked token: %d, want 401", got)
	}

	// Expired: the same, when its time is up.
	tok, _ = es.mint(t, "alice", 60, "s1")
	c, _ = es.dialEmbed(t, tok, chatOrigin, "s1")
	replayIDs(t, c)
	es.skew.Store(int64(61 * time.Second))
	wantClosed(t, c, "expired", websocket.StatusPolicyViolation)
	if got := answer(actor{token: tok}); got != http.StatusUnauthorized {
		t.Errorf("answer with an expired token: %d, want 401", got)
	}
	if _, status := es.dialEmbed(t, tok, chatOrigin, "s1"); status != http.StatusUnauthorized {
		t.Errorf("stream with an expired token: %d, want 401", status)
	}
	if got := es.status(t, q.ID); got != hitl.StatusPending {
		t.Errorf("the question is %s, want pending", got)
	}
}

// TestEmbedOrigins: pages of an embed origin get CORS for the element's
// routes only, exactly their origin and never a wildcard; the WebSocket
// accepts them; any other origin is refused as before.
func TestEmbedOrigins(t *testing.T) {
	turns.Parallel(t)
	es := newEmbedServer(t)
	tok, _ := es.mint(t, "alice", 600, "s1")
	q := es.askIn(t, "s1", nil)

	// A preflight for the answer.
	pre := func(origin, path string) *http.Response {
		resp, _ := es.call(t, es.anon, "OPTIONS", path, nil, "Origin", origin,
			"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization,content-type")
		return resp
	}
	resp := pre(chatOrigin, "/api/v1/interactions/"+q.ID+"/respond")
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != chatOrigin ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Authorization") || !strings.Contains(resp.Header.Get("Vary"), "Origin") {
		t.Errorf("preflight from the embed origin: %d %v", resp.StatusCode, resp.Header)
	}
	if resp := pre("http://evil.example", "/api/v1/interactions/"+q.ID+"/respond"); resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight from another origin allowed: %v", resp.Header)
	}
	if resp := pre(chatOrigin, "/api/v1/interactions"); resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight for another route: %d %v, want 403 without CORS", resp.StatusCode, resp.Header)
	}

	// Other routes, with alice's own cookie, from the embed origin: refused.
	alice := es.alice
	if resp, data := es.call(t, alice, "GET", "/api/v1/interactions", nil, "Origin", chatOrigin); resp.StatusCode != http.StatusForbidden {
		t.Errorf("list from the embed origin: %d %s, want 403", resp.StatusCode, data)
	}
	// From another origin: the cross-origin protection refuses the answer.
	if resp, data := es.call(t, alice, "POST", "/api/v1/interactions/"+q.ID+"/respond", map[string]any{"value": true},
		"Origin", "http://evil.example", "Sec-Fetch-Site", "cross-site"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("answer from another origin: %d %s, want 403", resp.StatusCode, data)
	}
	if _, status := es.dialEmbed(t, tok, "http://evil.example", "s1"); status != http.StatusForbidden {
		t.Errorf("stream from another origin: %d, want 403", status)
	}
	if _, status := es.dialEmbed(t, tok, chatOrigin, "s1"); status != http.StatusSwitchingProtocols {
		t.Errorf("stream from the embed origin: %d, want 101", status)
	}

	// The script and what it imports, readable by the embed origin.
	resp, data := es.call(t, es.anon, "GET", "/embed/v1/hitl-prompt.js", nil, "Origin", chatOrigin)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != chatOrigin ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") {
		t.Fatalf("script: %d %v", resp.StatusCode, resp.Header)
	}
	imp := regexp.MustCompile(`from "(/assets/[0-9a-f]+/embed\.js)"`).FindStringSubmatch(string(data))
	if imp == nil {
		t.Fatalf("the script imports no hashed module: %s", data)
	}
	resp, _ = es.call(t, es.anon, "GET", imp[1], nil, "Origin", chatOrigin)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != chatOrigin ||
		!strings.Contains(resp.Header.Get("Cache-Control"), "immutable") {
		t.Errorf("%s: %d %v", imp[1], resp.StatusCode, resp.Header)
	}
}
