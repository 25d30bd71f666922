package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/chatfake"
	"github.com/hitl-sh/hitl/internal/copilottest"
	"github.com/hitl-sh/hitl/internal/refused"
	"github.com/hitl-sh/hitl/internal/turns"
)

// hitl hook copilot-cli as GitHub Copilot CLI's preToolUse command hook,
// against the real Copilot CLI (internal/copilottest, offline) and a real
// hitl server: the person's decision is what Copilot CLI does. Every run
// uses the settings --print-settings prints.

// copilotHook returns the settings hitl hook copilot --print-settings
// prints, run with the test's hitl binary, with a question timeout of
// 50 s (the hook's: 110 s) and args.
func copilotHook(t *testing.T, args ...string) map[string]any {
	t.Helper()
	cmd := exec.Command(hitlBin, append([]string{"hook", "copilot", "--print-settings", "--timeout", "50s"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hitl hook copilot --print-settings: %v\n%s", err, stderr.String())
	}
	var settings map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &settings); err != nil {
		t.Fatalf("--print-settings printed %s: %v", stdout.String(), err)
	}
	return settings
}

// startCopilot runs Copilot CLI in the background; the channel gets its
// output.
func startCopilot(t *testing.T, opts copilottest.Options) <-chan *copilottest.Output {
	copilottest.RequireBinary(t)
	return inBackground(t, func() *copilottest.Output { return copilottest.Run(t, opts) })
}

// copilotTold returns what the model was told of call n.
func copilotTold(t *testing.T, api *chatfake.API, r *copilottest.Output, n int) string {
	t.Helper()
	told, ok := api.ToolResult(chatfake.CallID(n))
	if !ok {
		t.Fatalf("the model got no result for %s (exit %d)\n%s\n%s", chatfake.CallID(n), r.ExitCode, r.Stdout, r.Stderr)
	}
	return told
}

// TestCopilotHookApprove runs without --allow-all-tools: the hook is the
// only permission, and hitl's approve runs the call.
func TestCopilotHookApprove(t *testing.T) {
	turns.Parallel(t)
	h := startClaudeHitl(t)
	api := copilottest.NewAPI(t, copilottest.Bash("echo hi > out.txt"), chatfake.Text("finished"))
	done := startCopilot(t, copilottest.Options{API: api, Prompt: "write hi", Settings: copilotHook(t), Env: h.env(), Args: []string{}})
	in := h.answer(t, `"approve"`)
	r := <-done
	if out, _ := agentFile(t, r.Dir, "out.txt"); out != "hi\n" {
		t.Errorf("out.txt = %q, want the approved command's output (exit %d)", out, r.ExitCode)
	}
	if told := copilotTold(t, api, r, 0); strings.Contains(told, "Denied") {
		t.Errorf("the model was told %q, want the command's output", told)
	}
	if in.SourceAgent != "copilot-cli" || in.Action.Name != "bash" || in.Action.Kind != hitl.KindShell || in.CreatedBy != "claude" {
		t.Errorf("asked by %q (%s): %+v; want copilot-cli's bash, a shell action", in.SourceAgent, in.CreatedBy, in.Action)
	}
	var input struct{ Command, Cwd string }
	json.Unmarshal(in.Action.Input, &input)
	if input.Command != "echo hi > out.txt" || input.Cwd != r.Dir {
		t.Errorf("kind input %s, want the command and the CLI's directory %s", in.Action.Input, r.Dir)
	}
	if in.SessionID != r.SessionID() || !strings.HasPrefix(in.IdempotencyKey, "copilot-cli:"+in.SessionID+":bash:sha256:") ||
		!strings.HasPrefix(in.Context, "Copilot CLI asks to run **bash**") || in.Action.Description != "Run echo hi > out.txt" {
		t.Errorf("session %q, idempotency_key %q, context %q, description %q; want the run's session, the call's key, the model's description",
			in.SessionID, in.IdempotencyKey, in.Context, in.Action.Description)
	}
}

// TestCopilotHookDeny: a reject or a reply stops the call, and the model
// reads the person's words.
func TestCopilotHookDeny(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	cases := []struct{ name, answer, want string }{
		{"reject", `{"decision": "reject", "message": "not in this repository"}`,
			"Denied by preToolUse hook: The person reviewing this bash call in hitl (alice) rejected it: not in this repository"},
		{"respond", `{"decision": "respond", "message": "use the Makefile target instead"}`,
			"Denied by preToolUse hook: The person reviewing this bash call in hitl (alice) did not let it run, and replied: use the Makefile target instead"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			turns.Parallel(t)
			h := startClaudeHitl(t)
			api := copilottest.NewAPI(t, copilottest.Bash("echo hi > out.txt"), chatfake.Text("finished"))
			done := startCopilot(t, copilottest.Options{API: api, Prompt: "write hi", Settings: copilotHook(t), Env: h.env()})
			h.answer(t, tc.answer)
			r := <-done
			if out, ok := agentFile(t, r.Dir, "out.txt"); ok {
				t.Errorf("out.txt = %q, want none: the call was denied", out)
			}
			if got := copilotTold(t, api, r, 0); got != tc.want {
				t.Errorf("the model was told %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestCopilotHookEdit: the person edits the command, or a file's content;
// the CLI runs the edit.
func TestCopilotHookEdit(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	cases := []struct {
		name     string
		call     func(dir string) chatfake.Turn
		answer   string
		file     string
		wantFile string
	}{
		{"bash", func(string) chatfake.Turn { return copilottest.Bash("echo hi > out.txt") },
			`{"decision": "edit", "args": {"command": "echo edited > edited.txt"}}`, "edited.txt", "edited\n"},
		{"create", func(dir string) chatfake.Turn {
			return chatfake.Call("create", map[string]any{"path": filepath.Join(dir, "out.txt"), "file_text": "from the model\n"})
		}, `{"decision": "edit", "args": {"path": "out.txt", "file_text": "from the person\n"}}`, "out.txt", "from the person\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			turns.Parallel(t)
			h := startClaudeHitl(t)
			dir := filepath.Join(t.TempDir(), "work")
			api := copilottest.NewAPI(t, tc.call(dir), chatfake.Text("finished"))
			done := startCopilot(t, copilottest.Options{API: api, Prompt: "write", Dir: dir, Settings: copilotHook(t), Env: h.env()})
			h.answer(t, tc.answer)
			r := <-done
			if got, _ := agentFile(t, r.Dir, tc.file); got != tc.wantFile {
				t.Errorf("%s = %q, want the edit's %q (the model was told %q)", tc.file, got, tc.wantFile, copilotTold(t, api, r, 0))
			}
			if tc.file != "out.txt" {
				if out, ok := agentFile(t, r.Dir, "out.txt"); ok {
					t.Errorf("out.txt = %q, want none: the edited command ran instead", out)
				}
			}
		})
	}
}

// TestCopilotHookFailures: whenever hitl cannot decide, the call is denied
// and the model reads why.
func TestCopilotHookFailures(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	const prefix = "Denied by preToolUse hook: hitl could not get a decision on this bash call, so it is denied: "
	cases := []struct {
		name string
		env  func(h *claudeHitl) []string
		args []string
		want string // the start of what the model reads
	}{
		{name: "hitl down", env: func(h *claudeHitl) []string {
			return []string{"HITL_URL=" + refused.URL(t), "HITL_TOKEN=" + h.agentToken}
		}, want: prefix + "cannot reach the hitl server (POST http://127.0.0.1:"},
		{name: "no token", env: func(h *claudeHitl) []string { return []string{"HITL_URL=" + h.URL} },
			want: prefix + "hitl refused the credentials (authentication required"},
		{name: "nobody answers", args: []string{"--timeout", "1s"}, want: prefix + "nobody answered before the deadline."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			turns.Parallel(t)
			h := startClaudeHitl(t)
			env := h.env()
			if tc.env != nil {
				env = tc.env(h)
			}
			api := copilottest.NewAPI(t, copilottest.Bash("echo hi > out.txt"), chatfake.Text("finished"))
			r := copilottest.Run(t, copilottest.Options{API: api, Prompt: "write hi", Settings: copilotHook(t, tc.args...), Env: env})
			if out, ok := agentFile(t, r.Dir, "out.txt"); ok {
				t.Errorf("out.txt = %q, want none: the call was denied", out)
			}
			if got := copilotTold(t, api, r, 0); !strings.HasPrefix(got, tc.want) {
				t.Errorf("the model was told %q\nwant it to start with %q", got, tc.want)
			}
		})
	}
}
