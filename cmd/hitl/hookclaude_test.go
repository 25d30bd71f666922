package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/claudetest"
	"github.com/hitl-sh/hitl/internal/refused"
	"github.com/hitl-sh/hitl/internal/turns"
)

// hitl hook claude-code as Claude Code's PreToolUse command hook, against
// the real CLI: the person's decision is what Claude Code does.

// ran is the tool_result of a Bash call that ran and printed nothing.
const ran = "(Bash completed with no output)"

// commandHook returns the settings hitl hook claude-code --print-settings
// prints for event, with a question timeout of 50 s (the hook's: 110 s)
// and args.
func commandHook(t *testing.T, event string, args ...string) map[string]any {
	t.Helper()
	return printedSettings(t, append([]string{"--event", event, "--matcher", "Bash|Write", "--timeout", "50s"}, args...)...)
}

func TestClaudeCodeHookApprove(t *testing.T) {
	turns.Parallel(t)
	h := startClaudeHitl(t)
	api := claudetest.NewAPI(t, bash("echo hi > out.txt")...)
	p := claudetest.Start(t, claudetest.Options{API: api, Prompt: "write hi", Settings: commandHook(t, "PreToolUse"), Env: h.env()})
	in := h.answer(t, `"approve"`)
	r := p.Wait()
	checkRun(t, r)
	if out, _ := readFile(t, r, "out.txt"); out != "hi\n" {
		t.Errorf("out.txt = %q, want the approved command's output", out)
	}
	if got, _ := toolResult(t, api, r, "toolu_00"); got != ran {
		t.Errorf("tool_result %q, want %q", got, ran)
	}
	// The question: the call as Claude Code would run it, from where.
	if in.Type != hitl.TypeAction || in.Action.Name != "Bash" || in.Question != "Run Bash?" {
		t.Errorf("asked %s %+v %q, want the action Bash", in.Type, in.Action, in.Question)
	}
	var args map[string]string
	json.Unmarshal(in.Action.Args, &args)
	if args["command"] != "echo hi > out.txt" || in.Action.Description != "Run echo hi > out.txt" {
		t.Errorf("action args %s, description %q, want the call's", in.Action.Args, in.Action.Description)
	}
	if in.SourceAgent != "claude-code" || in.SessionID != r.Result.SessionID || in.CreatedBy != "claude" {
		t.Errorf("source_agent %q, session_id %q, created_by %q; want claude-code, the run's session %q, the agent token", in.SourceAgent, in.SessionID, in.CreatedBy, r.Result.SessionID)
	}
	if !strings.Contains(in.Context, r.Dir) || !strings.Contains(in.Context, "PreToolUse hook") {
		t.Errorf("context %q, want the project directory and the hook", in.Context)
	}
	if want := "claude-code:" + r.Result.SessionID + ":toolu_00"; in.IdempotencyKey != want {
		t.Errorf("idempotency_key %q, want %q", in.IdempotencyKey, want)
	}
	if in.Result.RespondedBy != "alice" || in.Result.Channel != hitl.ChannelWeb {
		t.Errorf("answered by %q on %q, want alice on web", in.Result.RespondedBy, in.Result.Channel)
	}
}

// TestClaudeCodeHookEdit: the person edits the content of a Write; the
// file holds the edit.
func TestClaudeCodeHookEdit(t *testing.T) {
	turns.Parallel(t)
	h := startClaudeHitl(t)
	api := claudetest.NewAPI(t, claudetest.ToolUse("Write", map[string]any{"file_path": "notes.txt", "content": "draft\n"}), claudetest.Text("finished"))
	p := claudetest.Start(t, claudetest.Options{API: api, Prompt: "write notes", Settings: commandHook(t, "PreToolUse"), Env: h.env()})
	in := h.pending(t)
	var args map[string]any
	if err := json.Unmarshal(in.Action.Args, &args); err != nil {
		t.Fatal(err)
	}
	args["content"] = "final\n" // Claude Code made file_path absolute; kept
	edit, _ := json.Marshal(map[string]any{"decision": "edit", "args": args})
	answered, err := h.person.Respond(t.Context(), in.ID, edit)
	if err != nil {
		t.Fatalf("edit: %v", err)
	}
	r := p.Wait()
	checkRun(t, r)
	if got, _ := readFile(t, r, "notes.txt"); got != "final\n" {
		t.Errorf("notes.txt = %q, want the edited content", got)
	}
	if args["file_path"] != filepath.Join(r.Dir, "notes.txt") {
		t.Errorf("file_path %v, want the absolute path Claude Code sends hooks", args["file_path"])
	}
	if want := `[{"op":"replace","path":"/content","value":"final\n"}]`; string(answered.Result.ArgsDiff) != want {
		t.Errorf("args_diff %s, want %s", answered.Result.ArgsDiff, want)
	}
}

// TestClaudeCodeHookDeny: a reject or a reply stops the call, and the
// model reads why, as the person wrote it.
func TestClaudeCodeHookDeny(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	cases := []struct {
		name, answer, want string
	}{
		{"reject", `{"decision": "reject", "message": "not in this repository"}`,
			"PreToolUse:Bash hook error: The person reviewing this Bash call in hitl (alice) rejected it: not in this repository"},
		{"reject without a reason", `"reject"`,
			"PreToolUse:Bash hook error: The person reviewing this Bash call in hitl (alice) rejected it, without giving a reason."},
		{"respond", `{"decision": "respond", "message": "use the Makefile target instead"}`,
			"PreToolUse:Bash hook error: The person reviewing this Bash call in hitl (alice) did not let it run, and replied: use the Makefile target instead"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			turns.Parallel(t)
			h := startClaudeHitl(t)
			api := claudetest.NewAPI(t, bash("echo hi > out.txt")...)
			// acceptEdits: without the hook's deny, the command would run.
			p := claudetest.Start(t, claudetest.Options{API: api, Prompt: "write hi", Settings: commandHook(t, "PreToolUse"), Env: h.env(),
				Args: []string{"--permission-mode", "acceptEdits"}})
			h.answer(t, tc.answer)
			r := p.Wait()
			checkRun(t, r, "toolu_00")
			if out, ok := readFile(t, r, "out.txt"); ok {
				t.Errorf("out.txt = %q, want none: the call was denied", out)
			}
			got, isError := toolResult(t, api, r, "toolu_00")
			if d := cmp.Diff(tc.want, got); d != "" || !isError {
				t.Errorf("tool_result (is_error %v), -want +got:\n%s", isError, d)
			}
		})
	}
}

// TestClaudeCodeHookAlwaysAllow: "approve, and always allow this" makes a
// rule, and the next matching call, in a later session, runs without
// asking anyone.
func TestClaudeCodeHookAlwaysAllow(t *testing.T) {
	turns.Parallel(t)
	h := startClaudeHitl(t)
	api := claudetest.NewAPI(t, bash("touch one.txt")...)
	p := claudetest.Start(t, claudetest.Options{API: api, Prompt: "touch a file", Settings: commandHook(t, "PreToolUse"), Env: h.env()})
	first := h.answer(t, `{"decision": "approve", "always": {"match": {"arg": "command", "prefix": "touch"}}}`)
	r := p.Wait()
	checkRun(t, r)
	if _, ok := readFile(t, r, "one.txt"); !ok {
		t.Error("one.txt was not made")
	}

	api = claudetest.NewAPI(t, bash("touch two.txt")...)
	r = claudetest.Run(t, claudetest.Options{API: api, Prompt: "touch another", Settings: commandHook(t, "PreToolUse"), Env: h.env()}) // nobody answers
	checkRun(t, r)
	if _, ok := readFile(t, r, "two.txt"); !ok {
		t.Error("two.txt was not made")
	}
	list := h.interactions(t)
	if len(list) != 2 {
		t.Fatalf("%d interactions, want 2", len(list))
	}
	second := list[1]
	if first.Result.RuleID != "" || second.Result.Channel != hitl.ChannelRule || second.Result.RuleID == "" {
		t.Errorf("second call answered on %q by rule %q, want the rule the first answer made", second.Result.Channel, second.Result.RuleID)
	}
}

// TestClaudeCodeHookFailures: whenever hitl cannot decide, the call is
// denied with the reason (or, with --on-error ask, left to Claude Code,
// which in -p has nobody to ask).
func TestClaudeCodeHookFailures(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	cases := []struct {
		name string
		// env replaces hitl's: where it is and the token.
		env   func(h *claudeHitl) []string
		args  []string
		event string
		want  string // the start of what the model reads
	}{
		{name: "hitl down", env: func(h *claudeHitl) []string { return []string{"HITL_URL=" + refused.URL(t)} },
			want: "PreToolUse:Bash hook error: hitl could not get a decision on this Bash call, so it is denied: cannot reach the hitl server (POST http://127.0.0.1:"},
		{name: "nobody answers", args: []string{"--timeout", "1s"},
			want: "PreToolUse:Bash hook error: hitl could not get a decision on this Bash call, so it is denied: nobody answered before the deadline."},
		{name: "no token", env: func(h *claudeHitl) []string { return []string{"HITL_URL=" + h.URL} },
			want: "PreToolUse:Bash hook error: hitl could not get a decision on this Bash call, so it is denied: hitl refused the credentials (authentication required"},
		{name: "hitl down, ask", env: func(h *claudeHitl) []string { return []string{"HITL_URL=" + refused.URL(t)} }, args: []string{"--on-error", "ask"},
			want: "hitl could not get a decision on this Bash call, so it is denied: cannot reach the hitl server"},
		{name: "PermissionRequest, hitl down", env: func(h *claudeHitl) []string { return []string{"HITL_URL=" + refused.URL(t)} }, event: "PermissionRequest",
			want: "hitl could not get a decision on this Bash call, so it is denied: cannot reach the hitl server"},
		{name: "PermissionRequest, hitl down, ask", env: func(h *claudeHitl) []string { return []string{"HITL_URL=" + refused.URL(t)} }, event: "PermissionRequest", args: []string{"--on-error", "ask"},
			want: "Output redirection to '$CWD/out.txt' needs approval."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			turns.Parallel(t)
			h := startClaudeHitl(t)
			env := h.env()
			if tc.env != nil {
				env = tc.env(h)
			}
			event, mode := "PreToolUse", []string{"--permission-mode", "acceptEdits"} // the command would run without the hook
			if tc.event != "" {
				event, mode = tc.event, nil // PermissionRequest runs only when Claude Code would ask
			}
			api := claudetest.NewAPI(t, bash("echo hi > out.txt")...)
			r := claudetest.Run(t, claudetest.Options{API: api, Prompt: "write hi", Settings: commandHook(t, event, tc.args...), Env: env, Args: mode})
			checkRun(t, r, "toolu_00")
			if out, ok := readFile(t, r, "out.txt"); ok {
				t.Errorf("out.txt = %q, want none: the call was denied", out)
			}
			got, _ := toolResult(t, api, r, "toolu_00")
			if got = strings.ReplaceAll(got, r.Dir, "$CWD"); !strings.HasPrefix(got, tc.want) {
				t.Errorf("tool_result %q\nwant it to start with %q", got, tc.want)
			}
		})
	}
}

// TestClaudeCodePermissionRequestHook: as a PermissionRequest hook, hitl
// answers only what Claude Code would ask about, in plain -p too; a
// denial's message reaches the model as it is.
func TestClaudeCodePermissionRequestHook(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	cases := []struct {
		name, answer, wantOut, want string
		denied                      bool
	}{
		{name: "approve", answer: `"approve"`, wantOut: "hi\n", want: ran},
		{name: "edit", answer: `{"decision": "edit", "args": {"command": "echo edited > out.txt"}}`, wantOut: "edited\n", want: ran},
		{name: "reject", answer: `{"decision": "reject", "message": "no files today"}`, denied: true,
			want: "The person reviewing this Bash call in hitl (alice) rejected it: no files today"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			turns.Parallel(t)
			h := startClaudeHitl(t)
			api := claudetest.NewAPI(t, bash("echo hi > out.txt")...)
			p := claudetest.Start(t, claudetest.Options{API: api, Prompt: "write hi", Settings: commandHook(t, "PermissionRequest"), Env: h.env()})
			in := h.answer(t, tc.answer)
			r := p.Wait()
			var denied []string
			if tc.denied {
				denied = []string{"toolu_00"}
			}
			checkRun(t, r, denied...)
			if out, _ := readFile(t, r, "out.txt"); out != tc.wantOut {
				t.Errorf("out.txt = %q, want %q", out, tc.wantOut)
			}
			if got, _ := toolResult(t, api, r, "toolu_00"); got != tc.want {
				t.Errorf("tool_result %q, want %q", got, tc.want)
			}
			if in.IdempotencyKey == "" || strings.Contains(in.IdempotencyKey, "toolu") || !strings.Contains(in.Context, "PermissionRequest hook") {
				t.Errorf("idempotency_key %q, context %q: PermissionRequest has no tool_use_id, and names itself", in.IdempotencyKey, in.Context)
			}
		})
	}
}
