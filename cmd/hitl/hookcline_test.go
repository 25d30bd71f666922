package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/chatfake"
	"github.com/hitl-sh/hitl/internal/clinetest"
	"github.com/hitl-sh/hitl/internal/refused"
	"github.com/hitl-sh/hitl/internal/turns"
)

// hitl hook cline against the real Cline CLI (internal/clinetest) and a
// real hitl server: the person's decision is what Cline does. Every run's
// hook file is the script --print-settings prints.

// clineHook returns the PreToolUse script hitl hook cline --print-settings
// prints, run with the test's hitl binary, with a question timeout of 50 s.
func clineHook(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(hitlBin, "hook", "cline", "--print-settings", "--wait-at-most", "50s")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hitl hook cline --print-settings: %v\n%s", err, stderr.String())
	}
	return stdout.String()
}

// startCline runs Cline in the background; the channel gets its output.
func startCline(t *testing.T, opts clinetest.Options) <-chan *clinetest.Output {
	clinetest.RequireBinary(t)
	return inBackground(t, func() *clinetest.Output { return clinetest.Run(t, opts) })
}

func TestClineHookApprove(t *testing.T) {
	turns.Parallel(t)
	h := startClaudeHitl(t)
	api := clinetest.NewAPI(t, clinetest.RunCommand("echo hi > out.txt"), chatfake.Text("finished"))
	done := startCline(t, clinetest.Options{API: api, Prompt: "write hi", Hook: clineHook(t), Env: h.env()})
	in := h.answer(t, `"approve"`)
	r := <-done
	if out, _ := agentFile(t, r.Dir, "out.txt"); out != "hi\n" || r.Finish() != "completed" {
		t.Errorf("out.txt = %q, finish %q; want the approved command's output and a completed task (exit %d)\n%s", out, r.Finish(), r.ExitCode, r.Stdout)
	}
	if in.SourceAgent != "cline" || in.Action.Name != "run_commands" || in.Action.Kind != hitl.KindShell || in.CreatedBy != "claude" {
		t.Errorf("asked by %q (%s): %+v; want Cline's run_commands, a shell action", in.SourceAgent, in.CreatedBy, in.Action)
	}
	var input struct{ Command, Cwd string }
	json.Unmarshal(in.Action.Input, &input)
	if input.Command != "echo hi > out.txt" || input.Cwd != r.Dir {
		t.Errorf("kind input %s, want the command and Cline's directory %s", in.Action.Input, r.Dir)
	}
	if in.SessionID == "" || !strings.HasPrefix(in.IdempotencyKey, "cline:"+in.SessionID+":run_commands:sha256:") || !strings.HasPrefix(in.Context, "Cline asks to run **run\\_commands**") {
		t.Errorf("session %q, idempotency_key %q, context %q; want the task and the call id", in.SessionID, in.IdempotencyKey, in.Context)
	}
}

// TestClineHookReject: a reject cancels the task (Cline's only way to stop
// a call), and the command never runs.
func TestClineHookReject(t *testing.T) {
	turns.Parallel(t)
	h := startClaudeHitl(t)
	api := clinetest.NewAPI(t, clinetest.RunCommand("echo hi > out.txt"), chatfake.Text("finished"))
	done := startCline(t, clinetest.Options{API: api, Prompt: "write hi", Hook: clineHook(t), Env: h.env()})
	h.answer(t, `{"decision": "reject", "message": "not in this repository"}`)
	r := <-done
	if out, ok := agentFile(t, r.Dir, "out.txt"); ok || r.Finish() != "aborted" {
		t.Errorf("out.txt = %q (%v), finish %q; want no file and an aborted task\n%s", out, ok, r.Finish(), r.Stdout)
	}
}

// TestClineHookEdit: the person edits the command; Cline runs the edit.
func TestClineHookEdit(t *testing.T) {
	turns.Parallel(t)
	h := startClaudeHitl(t)
	api := clinetest.NewAPI(t, clinetest.RunCommand("echo hi > out.txt"), chatfake.Text("finished"))
	done := startCline(t, clinetest.Options{API: api, Prompt: "write hi", Hook: clineHook(t), Env: h.env()})
	h.answer(t, `{"decision": "edit", "args": {"commands": ["echo edited > edited.txt"]}}`)
	r := <-done
	if out, ok := agentFile(t, r.Dir, "out.txt"); ok {
		t.Errorf("out.txt = %q, want none: the edited command ran instead", out)
	}
	if out, _ := agentFile(t, r.Dir, "edited.txt"); out != "edited\n" {
		t.Errorf("edited.txt = %q, want the edited command's output (finish %q)\n%s", out, r.Finish(), r.Stdout)
	}
}

// TestClineHookFailsClosed: with hitl unreachable the hook cancels the
// task, and the command never runs.
func TestClineHookFailsClosed(t *testing.T) {
	turns.Parallel(t)
	api := clinetest.NewAPI(t, clinetest.RunCommand("echo hi > out.txt"), chatfake.Text("finished"))
	r := clinetest.Run(t, clinetest.Options{API: api, Prompt: "write hi", Hook: clineHook(t),
		Env: []string{"HITL_URL=" + refused.URL(t), "HITL_TOKEN=hitl_nobody"}})
	if out, ok := agentFile(t, r.Dir, "out.txt"); ok || r.Finish() != "aborted" {
		t.Errorf("out.txt = %q (%v), finish %q; want no file and an aborted task\n%s", out, ok, r.Finish(), r.Stdout)
	}
}
