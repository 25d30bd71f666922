package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/turns"
)

// POST /api/v1/hooks/claude-code: Claude Code's HTTP hook.

// hookInput is a hook's input as Claude Code sends it.
func hookInput(event, tool string, input any) map[string]any {
	m := map[string]any{
		"session_id": "5e55-1", "transcript_path": "/home/u/.claude/projects/p/5e55-1.jsonl", "cwd": "/src/app",
		"permission_mode": "default", "hook_event_name": event, "tool_name": tool, "tool_input": input,
	}
	if event == "PreToolUse" {
		m["tool_use_id"] = "toolu_01"
	}
	return m
}

// hookReply is the result of a hook request sent in the background.
type hookReply struct {
	status int
	body   []byte
}

// postHook sends a hook request in the background.
func postHook(ctx context.Context, t *testing.T, url string, body any) <-chan hookReply {
	t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan hookReply, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(data))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			ch <- hookReply{}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		ch <- hookReply{resp.StatusCode, b}
	}()
	return ch
}

// await returns the hook's reply.
func await(t *testing.T, ch <-chan hookReply) hookReply {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("no reply to the hook after 30s")
		return hookReply{}
	}
}

func TestClaudeCodeHookEndpoint(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	cases := []struct {
		name, event, answer, want string
	}{
		{"PreToolUse approve", "PreToolUse", `"approve"`,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"Approved in hitl by local."}}`},
		{"PreToolUse edit", "PreToolUse", `{"decision": "edit", "args": {"command": "make test"}}`,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"Approved in hitl by local, with edited input.","updatedInput":{"command":"make test"}}}`},
		{"PreToolUse reject", "PreToolUse", `{"decision": "reject", "message": "not now"}`,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"The person reviewing this Bash call in hitl (local) rejected it: not now"}}`},
		{"PermissionRequest edit", "PermissionRequest", `{"decision": "edit", "args": {"command": "make test"}}`,
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"make test"}}}}`},
		{"PermissionRequest respond", "PermissionRequest", `{"decision": "respond", "message": "use make"}`,
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"The person reviewing this Bash call in hitl (local) did not let it run, and replied: use make"}}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			turns.Parallel(t)
			ts := newTestServer(t)
			ch := postHook(context.Background(), t, ts.URL+"/api/v1/hooks/claude-code?agent=ci-claude&timeout=120", hookInput(tc.event, "Bash", map[string]string{"command": "make deploy"}))
			in := waitPending(t, ts.Client(), ts.URL)
			if in.Type != hitl.TypeAction || in.SourceAgent != "ci-claude" || in.SessionID != "5e55-1" || in.Timeout != 120 || !strings.Contains(in.Context, tc.event+" hook") {
				t.Errorf("asked %s by %q in session %q for %v s, context %q", in.Type, in.SourceAgent, in.SessionID, in.Timeout, in.Context)
			}
			ts.mustDo(t, "POST", "/api/v1/interactions/"+in.ID+"/respond", `{"value": `+tc.answer+`}`, http.StatusOK, nil)
			r := await(t, ch)
			if r.status != http.StatusOK || strings.TrimSpace(string(r.body)) != tc.want {
				t.Errorf("%d %s\nwant 200 %s", r.status, r.body, tc.want)
			}
		})
	}
}

// TestClaudeCodeHookEndpointDenies: a hook's input that cannot be asked
// about, or a question that ends without an answer, is a deny (200), not
// an error status Claude Code would ignore.
func TestClaudeCodeHookEndpointDenies(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	big := map[string]string{"content": strings.Repeat("x", hitl.MaxActionArgsLen)}
	for _, tc := range []struct {
		name, query string
		body        map[string]any
		want        string
	}{
		{"no tool name", "", hookInput("PreToolUse", "", map[string]string{}), "hitl refused the question (the tool call has no tool name)."},
		{"input too large", "", hookInput("PreToolUse", "Write", big), "hitl refused the question (action.args is limited to 262144 bytes)."},
		{"reserved agent", "?agent=*", hookInput("PreToolUse", "Bash", map[string]string{"command": "ls"}), `hitl refused the question (source_agent "*" is reserved`},
		{"nobody answers", "?timeout=1", hookInput("PreToolUse", "Bash", map[string]string{"command": "ls"}), "nobody answered before the deadline."},
	} {
		r := await(t, postHook(context.Background(), t, ts.URL+"/api/v1/hooks/claude-code"+tc.query, tc.body))
		var out struct {
			Specific struct {
				Decision string `json:"permissionDecision"`
				Reason   string `json:"permissionDecisionReason"`
			} `json:"hookSpecificOutput"`
		}
		if r.status != http.StatusOK || json.Unmarshal(r.body, &out) != nil || out.Specific.Decision != "deny" || !strings.Contains(out.Specific.Reason, tc.want) {
			t.Errorf("%s: %d %s\nwant 200, a deny saying %q", tc.name, r.status, r.body, tc.want)
		}
	}

	// With on_error=ask, a question nobody answered goes back to Claude
	// Code's own prompt.
	r := await(t, postHook(context.Background(), t, ts.URL+"/api/v1/hooks/claude-code?timeout=1&on_error=ask", hookInput("PermissionRequest", "Bash", map[string]string{"command": "ls"})))
	if r.status != http.StatusOK || strings.TrimSpace(string(r.body)) != "{}" {
		t.Errorf("on_error=ask: %d %s, want 200 {} (no decision)", r.status, r.body)
	}
}

// TestClaudeCodeHookEndpointRefuses: what is not a PreToolUse or
// PermissionRequest hook's input, or not configured right, is refused.
func TestClaudeCodeHookEndpointRefuses(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	for _, tc := range []struct {
		method, query, body string
		status              int
		want                string
	}{
		{"POST", "", "not json", 400, "the hook input is not a JSON object"},
		{"POST", "", `{"hook_event_name": "Stop"}`, 400, "hitl answers the PreToolUse and PermissionRequest hooks, not Stop"},
		{"POST", "", `{"tool_name": "Bash"}`, 400, "the hook input has no hook_event_name"},
		{"POST", "", `{"x": "` + strings.Repeat("x", 8<<20) + `", "hook_event_name": "PreToolUse"}`, 413, "the hook input is larger than 8388608 bytes"},
		{"GET", "", "", 405, "method GET is not allowed"},
	} {
		status, body := ts.do(t, tc.method, "/api/v1/hooks/claude-code"+tc.query, tc.body)
		var e apiError
		_ = json.Unmarshal(body, &e)
		if status != tc.status || !strings.HasPrefix(e.Error.Message, tc.want) {
			t.Errorf("%s %s %.40q: %d %s\nwant %d %q", tc.method, tc.query, tc.body, status, body, tc.status, tc.want)
		}
	}
	if list, _, _ := ts.Broker.List(context.Background(), hitl.ListFilter{}); len(list) != 0 {
		t.Errorf("%d interactions made, want none", len(list))
	}
}

// TestClaudeCodeHookEndpointTooLarge: a hook's input larger than hitl
// reads (a Write of a file over 8 MiB) is denied in its event's shape,
// never refused with an error status, on which Claude Code would run the
// call; nothing is asked.
func TestClaudeCodeHookEndpointTooLarge(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	content := strings.Repeat("x", 9<<20)
	for _, event := range []string{"PreToolUse", "PermissionRequest"} {
		status, body := ts.do(t, "POST", "/api/v1/hooks/claude-code", hookInput(event, "Write", map[string]string{"file_path": "/tmp/big", "content": content}))
		var out struct {
			Specific struct {
				HookEventName      string `json:"hookEventName"`
				PermissionDecision string `json:"permissionDecision"`
				Reason             string `json:"permissionDecisionReason"`
				Decision           struct {
					Behavior string `json:"behavior"`
					Message  string `json:"message"`
				} `json:"decision"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal(body, &out); err != nil || status != http.StatusOK {
			t.Fatalf("%s: %d %.200s (%v), want 200 with a deny", event, status, body, err)
		}
		o := out.Specific
		decision, reason := o.PermissionDecision, o.Reason
		if event == "PermissionRequest" {
			decision, reason = o.Decision.Behavior, o.Decision.Message
		}
		if o.HookEventName != event || decision != "deny" || !strings.Contains(reason, "larger than 8388608 bytes") {
			t.Errorf("%s: %s, want a deny naming the size", event, body)
		}
	}
	if list, _, _ := ts.Broker.List(context.Background(), hitl.ListFilter{}); len(list) != 0 {
		t.Errorf("%d interactions made, want none", len(list))
	}
}

// TestClaudeCodeHookEndpointQuery: the hook's query parameters take the
// command hook's syntax too (540s, 9m), and once the body is a hook's
// input a parameter that is still wrong is a deny naming it, in the
// event's shape, never an error status (Claude Code runs the call when an
// HTTP hook fails).
func TestClaudeCodeHookEndpointQuery(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	for _, tc := range []struct{ query string }{{"?timeout=540s"}, {"?timeout=9m"}, {"?timeout=540&on_error=Deny"}, {"?timeout=540&on_error=ASK"}} {
		t.Run(tc.query, func(t *testing.T) {
			turns.Parallel(t)
			ts := newTestServer(t)
			ch := postHook(context.Background(), t, ts.URL+"/api/v1/hooks/claude-code"+tc.query, hookInput("PreToolUse", "Bash", map[string]string{"command": "ls"}))
			in := waitPending(t, ts.Client(), ts.URL)
			if got, want := in.Timeout, 540.0; got != want {
				t.Errorf("timeout %v s, want %v", got, want)
			}
			ts.mustDo(t, "POST", "/api/v1/interactions/"+in.ID+"/respond", `{"value": "approve"}`, http.StatusOK, nil)
			if r := await(t, ch); r.status != http.StatusOK || !strings.Contains(string(r.body), `"permissionDecision":"allow"`) {
				t.Errorf("%d %s, want 200 allow", r.status, r.body)
			}
		})
	}

	ts := newTestServer(t)
	for _, tc := range []struct{ query, want string }{
		{"?on_error=allow", `the hook's query parameter on_error must be deny or ask, not "allow"`},
		{"?timeout=0", "the hook's query parameter timeout must be between 1s and"},
		{"?timeout=NaN", "the hook's query parameter timeout must be"},
		{"?timeout=-5m", "the hook's query parameter timeout must be between 1s and"},
		{"?timeout=soon", `the hook's query parameter timeout must be a number of seconds or a duration such as 540s or 9m, not "soon"`},
		{"?timeout=9m&on_error=allow", "on_error must be deny or ask"},
	} {
		for _, event := range []string{"PreToolUse", "PermissionRequest"} {
			r := await(t, postHook(context.Background(), t, ts.URL+"/api/v1/hooks/claude-code"+tc.query, hookInput(event, "Bash", map[string]string{"command": "ls"})))
			var out struct {
				Specific struct {
					Event    string `json:"hookEventName"`
					Decision string `json:"permissionDecision"`
					Reason   string `json:"permissionDecisionReason"`
					Request  struct {
						Behavior string `json:"behavior"`
						Message  string `json:"message"`
					} `json:"decision"`
				} `json:"hookSpecificOutput"`
			}
			if r.status != http.StatusOK || json.Unmarshal(r.body, &out) != nil || out.Specific.Event != event {
				t.Errorf("%s %s: %d %s, want 200 with the %s hook's output", event, tc.query, r.status, r.body, event)
				continue
			}
			decision, reason := out.Specific.Decision, out.Specific.Reason
			if event == "PermissionRequest" {
				decision, reason = out.Specific.Request.Behavior, out.Specific.Request.Message
			}
			if decision != "deny" || !strings.Contains(reason, tc.want) {
				t.Errorf("%s %s: %s %q, want a deny saying %q", event, tc.query, decision, reason, tc.want)
			}
		}
	}
	if list, _, _ := ts.Broker.List(context.Background(), hitl.ListFilter{}); len(list) != 0 {
		t.Errorf("%d interactions made, want none", len(list))
	}
}

// TestClaudeCodeHookEndpointAuth: the hook authenticates like the API; an
// agent token asks, and a hook that gives up withdraws its question.
func TestClaudeCodeHookEndpointAuth(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	agent := hitltest.Token(t, ts.Store, "claude", hitl.RoleAgent)
	responder := hitltest.Token(t, ts.Store, "alice", hitl.RoleResponder)
	body, _ := json.Marshal(hookInput("PreToolUse", "Bash", map[string]string{"command": "ls"}))
	send := func(ctx context.Context, token string) (*http.Response, []byte, error) {
		req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/api/v1/hooks/claude-code", bytes.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, nil, err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b, nil
	}
	// Without a token the call is denied too (a 401 would let it run).
	if resp, b, err := send(context.Background(), ""); err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "hitl refused the credentials (authentication required") {
		t.Errorf("without a token: %v %s, want a deny", err, b)
	}
	// A person's token may not ask: the call is denied, saying why.
	if resp, b, err := send(context.Background(), responder); err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "hitl refused the credentials (responders cannot ask questions") {
		t.Errorf("with a responder's token: %v %s, want a deny", err, b)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := send(ctx, agent)
		done <- err
	}()
	var in hitl.Interaction
	hitltest.WaitFor(t, "the hook's question", func() bool {
		list, _, _ := ts.Broker.List(context.Background(), hitl.ListFilter{Status: hitl.StatusPending})
		if len(list) == 1 && ts.Broker.Waiting() == 1 {
			in = *list[0]
			return true
		}
		return false
	})
	if in.CreatedBy != "claude" {
		t.Errorf("created_by %q, want the agent token's name", in.CreatedBy)
	}
	cancel() // Claude Code's hook timeout
	<-done
	wctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	got, err := ts.Broker.Wait(wctx, in.ID)
	if err != nil || got.Status != hitl.StatusCancelled {
		t.Fatalf("after the hook gave up: %v, want the question cancelled", err)
	}
}
