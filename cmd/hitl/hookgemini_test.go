package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/geminitest"
	"github.com/hitl-sh/hitl/internal/refused"
	"github.com/hitl-sh/hitl/internal/turns"
)

// hitl hook gemini-cli as Gemini CLI's BeforeTool command hook, against
// the real Gemini CLI (internal/geminitest, headless in yolo mode, where
// the hook is the only gate) and a real hitl server: the person's decision
// is what Gemini CLI does. Every run uses the settings --print-settings
// prints.

// geminiHook returns the settings hitl hook gemini-cli --print-settings
// prints, run with the test's hitl binary, with a question timeout of
// 50 s (the hook's: 110,000 ms) and args.
func geminiHook(t *testing.T, args ...string) map[string]any {
	t.Helper()
	cmd := exec.Command(hitlBin, append([]string{"hook", "gemini-cli", "--print-settings", "--timeout", "50s"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hitl hook gemini-cli --print-settings: %v\n%s", err, stderr.String())
	}
	var settings map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &settings); err != nil {
		t.Fatalf("--print-settings printed %s: %v", stdout.String(), err)
	}
	return settings
}

// startGemini runs Gemini CLI in the background; the channel gets its
// output.
func startGemini(t *testing.T, opts geminitest.Options) <-chan *geminitest.Output {
	geminitest.RequireBinary(t)
	return inBackground(t, func() *geminitest.Output { return geminitest.Run(t, opts) })
}

// geminiTold returns what the model was told of call n: its output, or
// its error.
func geminiTold(t *testing.T, api *geminitest.API, r *geminitest.Output, n int) (output, errText string) {
	t.Helper()
	resp, ok := api.FunctionResponse(geminitest.CallID(n))
	if !ok {
		t.Fatalf("the model got no response for %s (exit %d)\n%s\n%s", geminitest.CallID(n), r.ExitCode, r.Stdout, r.Stderr)
	}
	output, _ = resp["output"].(string)
	errText, _ = resp["error"].(string)
	return output, errText
}

// TestGeminiHookApprove runs as on a GitHub Actions runner (GITHUB_SHA
// set), where Gemini CLI strips HITL_URL and HITL_TOKEN from its hooks'
// environment unless the hook's "env" hands them on, as the printed
// settings do.
func TestGeminiHookApprove(t *testing.T) {
	turns.Parallel(t)
	h := startClaudeHitl(t)
	api := geminitest.NewAPI(t, geminitest.Shell("echo hi > out.txt"), geminitest.Text("finished"))
	done := startGemini(t, geminitest.Options{API: api, Prompt: "write hi", Settings: geminiHook(t), Env: append(h.env(), "GITHUB_SHA=0000000")})
	in := h.answer(t, `"approve"`)
	r := <-done
	if out, _ := agentFile(t, r.Dir, "out.txt"); out != "hi\n" {
		t.Errorf("out.txt = %q, want the approved command's output (exit %d)", out, r.ExitCode)
	}
	if _, errText := geminiTold(t, api, r, 0); errText != "" {
		t.Errorf("the model was told of an error: %q", errText)
	}
	if in.SourceAgent != "gemini-cli" || in.Action.Name != "run_shell_command" || in.Action.Kind != hitl.KindShell || in.CreatedBy != "claude" {
		t.Errorf("asked by %q (%s): %+v; want gemini-cli's run_shell_command, a shell action", in.SourceAgent, in.CreatedBy, in.Action)
	}
	var input struct{ Command, Cwd string }
	json.Unmarshal(in.Action.Input, &input)
	if input.Command != "echo hi > out.txt" || input.Cwd != r.Dir {
		t.Errorf("kind input %s, want the command and the CLI's directory %s", in.Action.Input, r.Dir)
	}
	if r.Result == nil || in.SessionID != r.Result.SessionID || !strings.HasPrefix(in.IdempotencyKey, "gemini-cli:"+in.SessionID+":run_shell_command:sha256:") ||
		!strings.HasPrefix(in.Context, "Gemini CLI asks to run **run\\_shell\\_command**") {
		t.Errorf("session %q, idempotency_key %q, context %q; want the run's session, and the call's key", in.SessionID, in.IdempotencyKey, in.Context)
	}
}

// TestGeminiHookDeny: a reject or a reply stops the call, and the model
// reads the person's words.
func TestGeminiHookDeny(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	cases := []struct{ name, answer, want string }{
		{"reject", `{"decision": "reject", "message": "not in this repository"}`,
			"Tool execution blocked: The person reviewing this run_shell_command call in hitl (alice) rejected it: not in this repository"},
		{"respond", `{"decision": "respond", "message": "use the Makefile target instead"}`,
			"Tool execution blocked: The person reviewing this run_shell_command call in hitl (alice) did not let it run, and replied: use the Makefile target instead"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			turns.Parallel(t)
			h := startClaudeHitl(t)
			api := geminitest.NewAPI(t, geminitest.Shell("echo hi > out.txt"), geminitest.Text("finished"))
			done := startGemini(t, geminitest.Options{API: api, Prompt: "write hi", Settings: geminiHook(t), Env: h.env()})
			h.answer(t, tc.answer)
			r := <-done
			if out, ok := agentFile(t, r.Dir, "out.txt"); ok {
				t.Errorf("out.txt = %q, want none: the call was denied", out)
			}
			if _, got := geminiTold(t, api, r, 0); got != tc.want {
				t.Errorf("the model was told %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestGeminiHookEdit: the person edits the command; the CLI runs the edit.
func TestGeminiHookEdit(t *testing.T) {
	turns.Parallel(t)
	h := startClaudeHitl(t)
	api := geminitest.NewAPI(t, geminitest.Shell("echo hi > out.txt"), geminitest.Text("finished"))
	done := startGemini(t, geminitest.Options{API: api, Prompt: "write hi", Settings: geminiHook(t), Env: h.env()})
	h.answer(t, `{"decision": "edit", "args": {"command": "echo edited > edited.txt"}}`)
	r := <-done
	if out, ok := agentFile(t, r.Dir, "out.txt"); ok {
		t.Errorf("out.txt = %q, want none: the edited command ran instead", out)
	}
	if out, _ := agentFile(t, r.Dir, "edited.txt"); out != "edited\n" {
		t.Errorf("edited.txt = %q, want the edited command's output", out)
	}
	if out, _ := geminiTold(t, api, r, 0); !strings.Contains(out, "Tool input parameters were modified by a hook") {
		t.Errorf("the model was told %q, want the CLI's note of the edit", out)
	}
}

// TestGeminiHookFailures: whenever hitl cannot decide, the call is denied
// and the model reads why; with --on-error ask, a headless run ends
// without running it.
func TestGeminiHookFailures(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	cases := []struct {
		name string
		env  func(h *claudeHitl) []string
		args []string
		want string // the start of what the model reads; "" when the run ends
	}{
		{name: "hitl down", env: func(h *claudeHitl) []string {
			return []string{"HITL_URL=" + refused.URL(t), "HITL_TOKEN=" + h.agentToken}
		},
			want: "Tool execution blocked: hitl could not get a decision on this run_shell_command call, so it is denied: cannot reach the hitl server (POST http://127.0.0.1:"},
		{name: "no token", env: func(h *claudeHitl) []string { return []string{"HITL_URL=" + h.URL} },
			want: "Tool execution blocked: hitl could not get a decision on this run_shell_command call, so it is denied: hitl refused the credentials (authentication required"},
		{name: "nobody answers", args: []string{"--timeout", "1s"},
			want: "Tool execution blocked: hitl could not get a decision on this run_shell_command call, so it is denied: nobody answered before the deadline."},
		{name: "hitl down, ask", env: func(h *claudeHitl) []string {
			return []string{"HITL_URL=" + refused.URL(t), "HITL_TOKEN=" + h.agentToken}
		}, args: []string{"--on-error", "ask"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			turns.Parallel(t)
			h := startClaudeHitl(t)
			env := h.env()
			if tc.env != nil {
				env = tc.env(h)
			}
			api := geminitest.NewAPI(t, geminitest.Shell("echo hi > out.txt"), geminitest.Text("finished"))
			r := geminitest.Run(t, geminitest.Options{API: api, Prompt: "write hi", Settings: geminiHook(t, tc.args...), Env: env})
			if out, ok := agentFile(t, r.Dir, "out.txt"); ok {
				t.Errorf("out.txt = %q, want none: the call was denied", out)
			}
			if tc.want == "" {
				if _, told := api.FunctionResponse(geminitest.CallID(0)); told || r.Result != nil {
					t.Errorf("the run went on (told the model: %v, result %s), want it ended at the ask", told, r.Stdout)
				}
				return
			}
			if _, got := geminiTold(t, api, r, 0); !strings.HasPrefix(got, tc.want) {
				t.Errorf("the model was told %q\nwant it to start with %q", got, tc.want)
			}
		})
	}
}
