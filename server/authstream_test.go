package server_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/hitl-sh/hitl"
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
	t.Parallel()
	ts := newAuthServer(t, newSQLiteAuthStore(t), server.AuthOptions{StreamRecheck: 10 * time.Millisecond})
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
	t.Parallel()
	ls := newLocalServer(t, server.AuthOptions{StreamRecheck: 10 * time.Millisecond})
	c := dialWS(t, ls.testServer, nil)
	mustToken(t, ls.store, "build-bot", hitl.RoleAgent)
	ls.mu.Lock()
	ls.now = ls.now.Add(2 * time.Second)
	ls.mu.Unlock()
	wantClosed(t, c, "local mode ended", websocket.StatusPolicyViolation)
}
