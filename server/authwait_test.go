package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What waits on a caller's behalf ends when the caller's credentials stop
// holding, as streams do: the long-poll with a 401, the Claude Code hook
// and the permission prompt with a deny. The servers here check every
// 10 ms, not every 30 s.

// waitEndsTimeout bounds how long a test waits for a wait to end after
// its credentials did: far above the servers' 10 ms check, far below the
// waits' own timeouts (300 s and more), which a wait that outlives its
// credentials runs into.
const waitEndsTimeout = 20 * time.Second

// recheckQuickly is the authentication of the servers here.
var recheckQuickly = server.AuthOptions{StreamRecheck: 10 * time.Millisecond}

// reply is what came back to a request sent in the background.
type reply struct {
	status int
	body   []byte
}

// inBackground sends a request as a in the background.
func inBackground(t *testing.T, ts *authServer, a actor, method, path string, body any) <-chan reply {
	t.Helper()
	ch := make(chan reply, 1)
	go func() {
		resp, b := ts.call(t, a, method, path, body)
		ch <- reply{resp.StatusCode, b}
	}()
	return ch
}

// ended returns the reply, or fails the test when none comes in time.
func ended[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(waitEndsTimeout):
		t.Fatalf("%s: still waiting %s after its credentials ended", what, waitEndsTimeout)
		var zero T
		return zero
	}
}

// started waits until someone waits on id.
func started(t *testing.T, ts *authServer, id string) {
	t.Helper()
	select {
	case <-ts.Broker.WaitStarted(id):
	case <-time.After(waitEndsTimeout):
		t.Fatalf("nobody waits on %s", id)
	}
}

// TestWaitEndsWithItsCredentials: a long-poll, parked or held in its
// handler, ends with 401 once its token is revoked or its session logged
// out, rather than hand the answer to a credential that no longer holds.
func TestWaitEndsWithItsCredentials(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	for _, parked := range []bool{true, false} {
		name := map[bool]string{true: "parked", false: "in its handler"}[parked]
		t.Run(name, func(t *testing.T) {
			turns.Parallel(t)
			opts := &hitltest.Options{DB: hitltest.SQLiteDB(t), Prepare: func(s *server.Server) { server.SetHeldWaits(s, 0) }}
			if !parked {
				opts = &hitltest.Options{DB: hitltest.SQLiteDB(t), NoParking: true}
			}
			ts := startAuthServerWith(t, opts, recheckQuickly)
			for _, tc := range []struct {
				who actor
				end func()
			}{
				{ts.agent, func() {
					if _, err := ts.IDs.RevokeTokens(t.Context(), ts.agent.name); err != nil {
						t.Fatal(err)
					}
				}},
				{ts.alice, func() {
					if resp, _ := ts.call(t, ts.alice, "POST", "/api/v1/auth/logout", nil); resp.StatusCode != http.StatusOK {
						t.Fatalf("logout: %d", resp.StatusCode)
					}
				}},
			} {
				in := ts.ask(t, nil)
				ch := inBackground(t, ts, tc.who, "GET", "/api/v1/interactions/"+in.ID+"/wait?timeout=300", nil)
				started(t, ts, in.ID)
				tc.end()
				r := ended(t, tc.who.name+"'s wait", ch)
				var e apiError
				_ = json.Unmarshal(r.body, &e)
				if r.status != http.StatusUnauthorized || e.Error.Code != hitl.EUNAUTHORIZED || !strings.Contains(e.Error.Message, "no longer hold") {
					t.Errorf("%s's wait: %d %s, want 401 saying the credentials no longer hold", tc.who.name, r.status, r.body)
				}
			}
		})
	}
}

// TestClaudeCodeHookEndsWithItsCredentials: the HTTP hook, waiting for a
// person, denies the call once its token is revoked, and withdraws the
// question.
func TestClaudeCodeHookEndsWithItsCredentials(t *testing.T) {
	turns.Parallel(t)
	ts := newAuthServer(t, recheckQuickly)
	for _, event := range []string{"PreToolUse", "PermissionRequest"} {
		token := hitltest.Token(t, ts.Store, "claude-"+event, hitl.RoleAgent)
		claude := actor{name: "claude-" + event, token: token}
		ch := inBackground(t, ts, claude, "POST", "/api/v1/hooks/claude-code", hookInput(event, "Bash", map[string]string{"command": "make deploy"}))
		in := pendingBy(t, ts, claude.name)
		started(t, ts, in.ID)
		if _, err := ts.IDs.RevokeTokens(t.Context(), claude.name); err != nil {
			t.Fatal(err)
		}
		r := ended(t, event+" hook", ch)
		if r.status != http.StatusOK || !strings.Contains(string(r.body), `"deny"`) || !strings.Contains(string(r.body), "no longer hold") {
			t.Errorf("%s: %d %s, want 200 and a deny saying the credentials no longer hold", event, r.status, r.body)
		}
		if got := ts.status(t, in.ID); got != hitl.StatusCancelled {
			t.Errorf("%s: the question is %s, want it withdrawn (cancelled)", event, got)
		}
	}
}

// TestPermissionPromptEndsWithItsCredentials: the permission_prompt MCP
// tool, waiting for a person, denies the call once the token of its MCP
// session is revoked.
func TestPermissionPromptEndsWithItsCredentials(t *testing.T) {
	turns.Parallel(t)
	ts := newAuthServer(t, recheckQuickly)
	hc := &http.Client{Transport: bearer{ts.agent.token}}
	c := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	ch := make(chan result, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "permission_prompt", Arguments: map[string]any{
			"tool_name": "Bash", "input": map[string]string{"command": "make deploy"}, "tool_use_id": "toolu_01",
		}})
		ch <- result{res, err}
	}()
	in := pendingBy(t, ts, ts.agent.name)
	started(t, ts, in.ID)
	if _, err := ts.IDs.RevokeTokens(t.Context(), ts.agent.name); err != nil {
		t.Fatal(err)
	}
	r := ended(t, "permission_prompt", ch)
	if r.err != nil || len(r.res.Content) != 1 {
		t.Fatalf("permission_prompt: %v %v, want one text item", r.res, r.err)
	}
	var d struct{ Behavior, Message string }
	text, _ := r.res.Content[0].(*mcp.TextContent)
	if text == nil || json.Unmarshal([]byte(text.Text), &d) != nil || d.Behavior != "deny" || !strings.Contains(d.Message, "no longer hold") {
		t.Errorf("permission_prompt: %+v, want a deny saying the credentials no longer hold", r.res.Content[0])
	}
}

// bearer sends a bearer token with every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(req)
}

// pendingBy waits for the pending interaction created by name, and
// returns it.
func pendingBy(t *testing.T, ts *authServer, name string) *hitl.Interaction {
	t.Helper()
	var in *hitl.Interaction
	hitltest.WaitFor(t, "a question from "+name, func() bool {
		list, _, _ := ts.Broker.List(context.Background(), hitl.ListFilter{Status: hitl.StatusPending})
		for _, l := range list {
			if l.CreatedBy == name {
				in = l
				return true
			}
		}
		return false
	})
	return in
}

// TestClaudeCodeHookRefusedIsADeny: a request to the HTTP hook refused
// before its handler (no token, a revoked or unknown one) is still a 200
// deny once its body is a hook's input: Claude Code runs the call when
// its HTTP hook answers anything else. A body that is not a hook's gets
// the usual 401.
func TestClaudeCodeHookRefusedIsADeny(t *testing.T) {
	turns.Parallel(t)
	ts := newAuthServer(t, server.AuthOptions{})
	revoked := hitltest.Token(t, ts.Store, "gone", hitl.RoleAgent)
	if _, err := ts.IDs.RevokeTokens(t.Context(), "gone"); err != nil {
		t.Fatal(err)
	}
	for name, a := range map[string]actor{"no token": {}, "revoked token": {token: revoked}, "unknown token": {token: "hitl_nope"}} {
		for _, event := range []string{"PreToolUse", "PermissionRequest"} {
			resp, body := ts.call(t, a, "POST", "/api/v1/hooks/claude-code", hookInput(event, "Bash", map[string]string{"command": "make deploy"}))
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"deny"`) || !strings.Contains(string(body), "hitl refused the credentials") {
				t.Errorf("%s, %s: %d %s, want 200 and a deny naming the refusal", name, event, resp.StatusCode, body)
			}
		}
		if resp, _ := ts.call(t, a, "POST", "/api/v1/hooks/claude-code", map[string]any{"hello": "world"}); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s, not a hook's input: %d, want 401", name, resp.StatusCode)
		}
	}
	if list, _, err := ts.Broker.List(t.Context(), hitl.ListFilter{}); err != nil || len(list) != 0 {
		t.Errorf("questions asked by refused requests: %d, %v; want none", len(list), err)
	}
}
