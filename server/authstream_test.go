package server_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/server"
)

// wantClosed reads c until it closes and checks the close status.
func wantClosed(t *testing.T, c *websocket.Conn, what string, want websocket.StatusCode) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), streamTimeout)
	defer cancel()
	for {
		_, _, err := c.Read(ctx)
		if err == nil {
			continue // a message sent before the check
		}
		if got := websocket.CloseStatus(err); got != want {
			t.Errorf("%s: the WebSocket ended with %v (status %d), want status %d", what, err, got, want)
		}
		return
	}
}

// wantEnded reads s until the server ends it (next fails the test after
// streamTimeout).
func wantEnded(t *testing.T, s *sseStream) {
	t.Helper()
	for {
		if _, err := s.next(t); errors.Is(err, errStreamEnded) {
			return
		}
	}
}

// TestStreamsEndWithTheirCredentials: a live stream ends once its token is
// revoked or its session logged out, so no later question reaches it.
func TestStreamsEndWithTheirCredentials(t *testing.T) {
	turns.Parallel(t)
	ts := newAuthServer(t, server.AuthOptions{StreamRecheck: 10 * time.Millisecond})
	agentWS, _ := ts.dialWS(t, ts.agent)
	agentSSE, _ := ts.openSSE(t, ts.agent, "")
	aliceWS, _ := ts.dialWS(t, ts.alice)
	aliceSSE, _ := ts.openSSE(t, ts.alice, "")
	bobWS, _ := ts.dialWS(t, ts.bob)

	if _, err := ts.IDs.RevokeTokens(t.Context(), "build-bot"); err != nil {
		t.Fatal(err)
	}
	wantClosed(t, agentWS, "revoked token", websocket.StatusPolicyViolation)
	wantEnded(t, agentSSE)

	if resp, _ := ts.call(t, ts.alice, "POST", "/api/v1/auth/logout", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("logout: %d", resp.StatusCode)
	}
	wantClosed(t, aliceWS, "logged out", websocket.StatusPolicyViolation)
	wantEnded(t, aliceSSE)

	// Bob's stream goes on.
	in := ts.ask(t, nil)
	readWSType(t, bobWS, "hitl:question", in.ID)
}

// TestLocalStreamEndsWithLocalMode: a stream opened in local mode ends
// when the first token appears, rather than keep its admin view.
func TestLocalStreamEndsWithLocalMode(t *testing.T) {
	turns.Parallel(t)
	ls := newLocalServer(t, server.AuthOptions{StreamRecheck: 10 * time.Millisecond})
	c := dialWS(t, ls.testServer, nil)
	hitltest.Token(t, ls.Store, "build-bot", hitl.RoleAgent)
	ls.mu.Lock()
	ls.now = ls.now.Add(2 * time.Second)
	ls.mu.Unlock()
	wantClosed(t, c, "local mode ended", websocket.StatusPolicyViolation)
}

// TestWebSocketReplayPerAudience connects each caller twice with nothing
// happening in between (the second replay may reuse the first's list), and
// again after a new question: every replay holds what that caller may see,
// never another caller's list.
func TestWebSocketReplayPerAudience(t *testing.T) {
	turns.Parallel(t)
	ts := newAuthServer(t, server.AuthOptions{})
	toAlice := ts.ask(t, &hitl.Targets{Users: []string{"alice"}})
	toOps := ts.ask(t, &hitl.Targets{Groups: []string{"ops"}})
	// A first event after start-up, so the log position is settled.
	open := ts.ask(t, nil)

	want := map[string][]string{
		ts.alice.name: {toAlice.ID, open.ID},
		ts.bob.name:   {toOps.ID, open.ID},
		ts.admin.name: {toAlice.ID, toOps.ID, open.ID},
	}
	for _, a := range []actor{ts.alice, ts.bob, ts.admin, ts.alice, ts.bob, ts.admin} {
		if got := replayOf(t, ts, a, len(want[a.name])); fmt.Sprint(got) != fmt.Sprint(want[a.name]) {
			t.Errorf("%s's replay %v, want %v", a.name, got, want[a.name])
		}
	}
	// A new question changes the log: every caller's next replay has it
	// when it may see it.
	later := ts.ask(t, &hitl.Targets{Users: []string{"bob"}})
	for _, tt := range []struct {
		a    actor
		want []string
	}{
		{ts.alice, []string{toAlice.ID, open.ID}},
		{ts.bob, []string{toOps.ID, open.ID, later.ID}},
		{ts.admin, []string{toAlice.ID, toOps.ID, open.ID, later.ID}},
	} {
		if got := replayOf(t, ts, tt.a, len(tt.want)); fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("after a new question: %s's replay %v, want %v", tt.a.name, got, tt.want)
		}
	}
}

// replayOf connects as a and reads the replay: n questions, then
// hitl:replay_done listing the same ids.
func replayOf(t *testing.T, ts *authServer, a actor, n int) []string {
	t.Helper()
	c, status := ts.dialWS(t, a)
	if c == nil {
		t.Fatalf("dial as %s: status %d", a.name, status)
	}
	defer c.CloseNow()
	got, done := readReplay(t, c)
	if len(got) != n {
		t.Errorf("%s: the replay holds %d questions, want %d", a.name, len(got), n)
	}
	if fmt.Sprint(done["pending"]) != fmt.Sprint(got) {
		t.Errorf("%s: hitl:replay_done lists %v, want the replayed %v", a.name, done["pending"], got)
	}
	return got
}
