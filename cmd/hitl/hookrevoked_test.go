package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/server"
)

// TestHookDeniesWhenItsTokenIsRevoked: the command hook, waiting for a
// person with a token revoked mid-wait, denies the call (its long-poll
// ends with 401), saying why, rather than wait on for the person's answer.
// HITL_TOKEN is the process's, so this test does not run in parallel.
func TestHookDeniesWhenItsTokenIsRevoked(t *testing.T) {
	srv := hitltest.Start(t, &hitltest.Options{Server: &server.Options{Auth: server.AuthOptions{StreamRecheck: 10 * time.Millisecond}}})
	t.Setenv("HITL_TOKEN", addToken(t, srv, "claude", hitl.RoleAgent))
	type result struct {
		stdout, stderr string
		code           int
	}
	ch := make(chan result, 1)
	go func() {
		stdout, stderr, code := runHookWith(`{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "make deploy"}, "tool_use_id": "toolu_01"}`, "--server", srv.URL)
		ch <- result{stdout, stderr, code}
	}()
	var in *hitl.Interaction
	hitltest.WaitFor(t, "the hook's question", func() bool {
		list, _, _ := srv.Broker.List(context.Background(), hitl.ListFilter{Status: hitl.StatusPending})
		if len(list) == 1 {
			in = list[0]
		}
		return in != nil
	})
	select {
	case <-srv.Broker.WaitStarted(in.ID):
	case <-time.After(20 * time.Second):
		t.Fatal("the hook does not wait")
	}
	if _, err := srv.Store.RevokeTokens(context.Background(), "claude"); err != nil {
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-ch:
	case <-time.After(20 * time.Second):
		// The answer would reach it: the test fails, and answers so the
		// hook ends.
		ctx := hitl.WithCaller(context.Background(), hitl.Caller{Name: "alice", Role: hitl.RoleResponder, Channel: hitl.ChannelWeb})
		_, _ = srv.Broker.Respond(ctx, in.ID, json.RawMessage(`"approve"`))
		r = <-ch
		t.Errorf("the hook still waited 20s after its token was revoked; then printed %s", r.stdout)
	}
	var out struct {
		Specific struct{ PermissionDecision, PermissionDecisionReason string } `json:"hookSpecificOutput"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil || out.Specific.PermissionDecision != "deny" || !strings.Contains(out.Specific.PermissionDecisionReason, "hitl refused the credentials") {
		t.Errorf("exit %d, stdout %s, stderr %s; want a deny saying hitl refused the credentials", r.code, r.stdout, r.stderr)
	}
}
