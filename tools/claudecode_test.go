package tools

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/client"
)

// bashCall is a call Claude Code asks about.
var bashCall = ToolCall{Tool: "Bash", Input: json.RawMessage(`{"command":"make deploy","description":"Deploy"}`),
	ToolUseID: "toolu_01", SessionID: "s-1", Cwd: "/src/app", PermissionMode: "default", Via: "PreToolUse hook"}

// reviewAsync runs Review in a goroutine.
func reviewAsync(ctx context.Context, svc hitl.Service, call ToolCall, opts *ReviewOptions) <-chan *Verdict {
	ch := make(chan *Verdict, 1)
	go func() { ch <- Review(ctx, svc, call, opts) }()
	return ch
}

// verdict waits for a verdict.
func verdict(t *testing.T, ch <-chan *Verdict) *Verdict {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatal("no verdict after 30s")
		return nil
	}
}

func TestReviewDecisions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		answer string
		want   Verdict
	}{
		{`"approve"`, Verdict{Allow: true, Reason: "Approved in hitl by alice."}},
		{`{"decision": "edit", "args": {"command": "make deploy-staging"}}`,
			Verdict{Allow: true, UpdatedInput: json.RawMessage(`{"command":"make deploy-staging"}`), Reason: "Approved in hitl by alice, with edited input."}},
		{`{"decision": "reject", "message": "not on a Friday"}`, Verdict{Reason: "The person reviewing this Bash call in hitl (alice) rejected it: not on a Friday"}},
		{`"no"`, Verdict{Reason: "The person reviewing this Bash call in hitl (alice) rejected it, without giving a reason."}},
		{`{"decision": "respond", "message": "run make check first"}`, Verdict{Reason: "The person reviewing this Bash call in hitl (alice) did not let it run, and replied: run make check first"}},
	}
	for _, tc := range cases {
		t.Run(tc.answer, func(t *testing.T) {
			t.Parallel()
			b := startEngine(t)
			ch := reviewAsync(context.Background(), b, bashCall, nil)
			in := answer(t, b, tc.answer)
			v := verdict(t, ch)
			if d := cmp.Diff(tc.want, *v, cmpVerdict); d != "" {
				t.Errorf("verdict (-want +got):\n%s", d)
			}
			if v.Interaction == nil || v.Interaction.ID != in.ID {
				t.Errorf("verdict's interaction %v, want %s", v.Interaction, in.ID)
			}
		})
	}
}

// cmpVerdict compares what a verdict says, not the interaction it came
// from.
var cmpVerdict = cmp.Options{
	cmp.FilterPath(func(p cmp.Path) bool {
		f := p.Last().String()
		return f == ".Interaction" || f == ".Err"
	}, cmp.Ignore()),
	cmp.Comparer(func(a, b json.RawMessage) bool { return string(a) == string(b) }),
}

// TestReviewQuestion: the question names the call, where it comes from,
// and is scoped to the agent; a retried call finds its question again.
func TestReviewQuestion(t *testing.T) {
	t.Parallel()
	b := startEngine(t)
	ctx := hitl.WithCaller(context.Background(), hitl.Caller{Name: "claude", Role: hitl.RoleAgent})
	ch := reviewAsync(ctx, b, bashCall, &ReviewOptions{SourceAgent: "ci-claude", Timeout: 90 * time.Second})
	in := answer(t, b, `"approve"`)
	verdict(t, ch)
	want := &hitl.Action{Name: "Bash", Args: json.RawMessage(`{"command":"make deploy","description":"Deploy"}`), Description: "Deploy",
		Kind: hitl.KindShell, Input: json.RawMessage(`{"command":"make deploy","cwd":"/src/app"}`)}
	if d := cmp.Diff(want, in.Action); d != "" {
		t.Errorf("action (-want +got):\n%s", d)
	}
	if in.SourceAgent != "ci-claude" || in.SessionID != "s-1" || in.IdempotencyKey != "claude-code:s-1:toolu_01" || in.Timeout != 90 {
		t.Errorf("source_agent %q, session_id %q, key %q, timeout %v", in.SourceAgent, in.SessionID, in.IdempotencyKey, in.Timeout)
	}
	wantContext := "Claude Code asks to run **Bash** in `/src/app`. (session `s-1`, permission mode `default`, asked by its PreToolUse hook)"
	if in.Context != wantContext {
		t.Errorf("context %q\nwant %q", in.Context, wantContext)
	}
	if in.Metadata["cwd"] != "/src/app" || in.Metadata["tool_use_id"] != "toolu_01" {
		t.Errorf("metadata %v", in.Metadata)
	}
	// The hook run again for the same call: the same answer, nobody asked.
	v := Review(ctx, b, bashCall, &ReviewOptions{SourceAgent: "ci-claude", Timeout: 90 * time.Second})
	if !v.Allow || v.Interaction.ID != in.ID {
		t.Errorf("retried review %+v, want the first answer", v)
	}
}

func TestReviewRules(t *testing.T) {
	t.Parallel()
	b := startEngine(t)
	admin := hitl.WithCaller(context.Background(), hitl.Caller{Name: "root", Role: hitl.RoleAdmin})
	allow, err := b.CreateRule(admin, hitl.RuleRequest{Effect: hitl.RuleAllow, SourceAgent: ClaudeCodeAgent, ActionName: "Bash", Match: &hitl.RuleMatch{Arg: "command", Prefix: "git status"}})
	if err != nil {
		t.Fatal(err)
	}
	deny, err := b.CreateRule(admin, hitl.RuleRequest{Effect: hitl.RuleDeny, SourceAgent: ClaudeCodeAgent, ActionName: "Bash", Match: &hitl.RuleMatch{Arg: "command", Prefix: "rm"}, Message: "never rm"})
	if err != nil {
		t.Fatal(err)
	}
	bare, err := b.CreateRule(admin, hitl.RuleRequest{Effect: hitl.RuleDeny, SourceAgent: ClaudeCodeAgent, ActionName: "WebFetch"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		call ToolCall
		want Verdict
	}{
		{ToolCall{Tool: "Bash", Input: json.RawMessage(`{"command":"git status"}`)}, Verdict{Allow: true, Reason: "Allowed by hitl rule " + allow.ID + "."}},
		{ToolCall{Tool: "Bash", Input: json.RawMessage(`{"command":"rm -rf build"}`)}, Verdict{Reason: "A hitl rule (" + deny.ID + ") denies this Bash call: never rm"}},
		{ToolCall{Tool: "WebFetch", Input: json.RawMessage(`{"url":"https://example.com"}`)}, Verdict{Reason: "A hitl rule (" + bare.ID + ") denies this WebFetch call."}},
	} {
		v := Review(context.Background(), b, tc.call, nil)
		if d := cmp.Diff(tc.want, *v, cmpVerdict); d != "" {
			t.Errorf("%s: verdict (-want +got):\n%s", tc.call.Input, d)
		}
	}
}

// TestReviewFailures: every way of not getting a decision is a deny that
// says why.
func TestReviewFailures(t *testing.T) {
	t.Parallel()
	b := startEngine(t)
	prefix := "hitl could not get a decision on this Bash call, so it is denied: "
	for _, tc := range []struct {
		name string
		call ToolCall
		opts *ReviewOptions
		want string
	}{
		{"no tool name", ToolCall{Input: json.RawMessage(`{}`)}, nil, "hitl could not get a decision on this tool call, so it is denied: hitl refused the question (the tool call has no tool name)."},
		{"input not an object", ToolCall{Tool: "Bash", Input: json.RawMessage(`"ls"`)}, nil, prefix + "hitl refused the question (the tool call's input is not a JSON object)."},
		{"input too large", ToolCall{Tool: "Bash", Input: json.RawMessage(`{"command":"` + strings.Repeat("x", hitl.MaxActionArgsLen) + `"}`)}, nil,
			prefix + "hitl refused the question (action.args is limited to 262144 bytes)."},
		{"reserved agent", bashCall, &ReviewOptions{SourceAgent: hitl.AnyAgent}, prefix + "hitl refused the question (source_agent \"*\" is reserved for rules that apply to every agent)."},
	} {
		v := Review(context.Background(), b, tc.call, tc.opts)
		if !v.Failed || v.Allow || v.Reason != tc.want {
			t.Errorf("%s: verdict %+v\nwant the reason %q", tc.name, v, tc.want)
		}
	}
	if list, _, _ := b.List(context.Background(), hitl.ListFilter{}); len(list) != 0 {
		t.Errorf("%d interactions made, want none", len(list))
	}

	// A server nobody listens on.
	c := client.New(closedServer(t), nil)
	v := Review(context.Background(), c, bashCall, nil)
	if !v.Failed || !strings.HasPrefix(v.Reason, prefix+"cannot reach the hitl server (POST http://127.0.0.1:") {
		t.Errorf("unreachable: verdict %+v", v)
	}
}

// TestReviewEnded: a question cancelled in hitl, or withdrawn because
// the caller stopped waiting, denies.
func TestReviewEnded(t *testing.T) {
	t.Parallel()
	b := startEngine(t)
	ch := reviewAsync(context.Background(), b, bashCall, nil)
	in := waiting(t, b)
	if _, err := b.Cancel(person, in.ID, "the release was called off"); err != nil {
		t.Fatal(err)
	}
	v := verdict(t, ch)
	want := "hitl could not get a decision on this Bash call, so it is denied: the question was cancelled in hitl (interaction " + in.ID + " was cancelled: the release was called off)."
	if !v.Failed || v.Reason != want {
		t.Errorf("cancelled: %q\nwant %q", v.Reason, want)
	}

	ctx, cancel := context.WithCancel(context.Background())
	call := bashCall
	call.ToolUseID = "toolu_02"
	ch = reviewAsync(ctx, b, call, nil)
	in = waiting(t, b)
	cancel()
	v = verdict(t, ch)
	if !v.Failed || !strings.HasSuffix(v.Reason, "the review was interrupted before anyone answered; the question was withdrawn.") {
		t.Errorf("interrupted: %q", v.Reason)
	}
	if got, err := b.Get(context.Background(), in.ID); err != nil || got.Status != hitl.StatusCancelled {
		t.Errorf("the withdrawn question is %v (%v), want cancelled", got.Status, err)
	}
}

// TestHookInputFixtures: the inputs Claude Code sent its hooks (recorded
// by internal/claudetest) parse into the call hitl asks about.
func TestHookInputFixtures(t *testing.T) {
	t.Parallel()
	for file, want := range map[string]ToolCall{
		"pretooluse-input.json": {Tool: "Bash", Input: json.RawMessage(`{"command":"echo hi > out.txt","description":"Write out.txt"}`),
			ToolUseID: "toolu_00", SessionID: "00000000-0000-0000-0000-000000000000", Cwd: "$CWD", PermissionMode: "default", Via: "PreToolUse hook"},
		"permissionrequest-input.json": {Tool: "Bash", Input: json.RawMessage(`{"command":"echo hi > out.txt","description":"Write out.txt"}`),
			SessionID: "00000000-0000-0000-0000-000000000000", Cwd: "$CWD", PermissionMode: "default", Via: "PermissionRequest hook"},
	} {
		data, err := os.ReadFile(filepath.Join("..", "internal", "claudetest", "testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		in, err := ParseHookInput(data)
		if err != nil || in.Supported() != nil {
			t.Fatalf("%s: %v, %v", file, err, in.Supported())
		}
		got := in.ToolCall()
		got.Input = mustCompact(t, got.Input)
		if d := cmp.Diff(want, got, cmpVerdict); d != "" {
			t.Errorf("%s: call (-want +got):\n%s", file, d)
		}
	}
}

func TestParseHookInputRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, parse, supported string
	}{
		{"", "the hook input is not a JSON object", ""},
		{"[1]", "the hook input is not a JSON object", ""},
		{`{"hook_event_name": "PreToolUse"`, "the hook input is not valid JSON", ""},
		{`{"hook_event_name": "Stop"}`, "", "hitl answers the PreToolUse and PermissionRequest hooks, not Stop: configure it under one of those"},
		{`{"tool_name": "Bash"}`, "", "the hook input has no hook_event_name"},
	} {
		in, err := ParseHookInput([]byte(tc.in))
		if tc.parse != "" {
			if hitl.ErrorCode(err) != hitl.EINVALID || !strings.HasPrefix(hitl.ErrorMessage(err), tc.parse) {
				t.Errorf("%q: %v, want %q", tc.in, err, tc.parse)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		if err := in.Supported(); hitl.ErrorCode(err) != hitl.EINVALID || hitl.ErrorMessage(err) != tc.supported {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.supported)
		}
	}
}

// TestReviewGivesUpAfterDeadline is not parallel: it shortens
// reviewGrace. A server that stops reporting is given up on past the
// deadline, the question withdrawn, the call denied.
func TestReviewGivesUpAfterDeadline(t *testing.T) {
	defer func(d time.Duration) { reviewGrace = d }(reviewGrace)
	reviewGrace = 10 * time.Millisecond
	svc := &silentServer{cancels: make(chan string, 1)}
	v := Review(context.Background(), svc, bashCall, &ReviewOptions{Timeout: time.Second})
	if !v.Failed || !strings.HasSuffix(v.Reason, "the hitl server reported no outcome 10ms after the question's deadline; it may have stopped.") {
		t.Errorf("verdict %+v", v)
	}
	if id := <-svc.cancels; id != "lost" {
		t.Errorf("cancelled %q, want the question withdrawn", id)
	}
}

// closedServer returns the URL of a server that has stopped.
func closedServer(t *testing.T) string {
	t.Helper()
	ts := httptest.NewServer(http.NotFoundHandler())
	ts.Close()
	return ts.URL
}

func mustCompact(t *testing.T, raw json.RawMessage) json.RawMessage {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return marshal(v)
}
