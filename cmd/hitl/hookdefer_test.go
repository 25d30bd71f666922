package main

import (
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/claudetest"
	"github.com/hitl-sh/hitl/internal/turns"
)

// TestClaudeCodeHookDefer: with --defer-after, a call nobody has decided
// on yet is deferred: claude -p stops without running it, the question
// stays open in hitl, and once the person has answered, claude -p
// --resume asks again, finds the same question and runs the call.
func TestClaudeCodeHookDefer(t *testing.T) {
	turns.Parallel(t)
	h := startClaudeHitl(t)
	api := claudetest.NewAPI(t, bash("echo later > out.txt")...)
	settings := commandHook(t, "PreToolUse", "--timeout", "1h", "--defer-after", "2s")
	r := claudetest.Run(t, claudetest.Options{API: api, Prompt: "write later", Settings: settings, Env: h.env()})
	if _, ok := readFile(t, r, "out.txt"); ok {
		t.Fatal("out.txt exists: the deferred call ran")
	}
	if r.Result == nil || r.Result.SessionID == "" {
		t.Fatalf("deferred run: exit %d, result %+v\nstderr: %s", r.ExitCode, r.Result, r.Stderr)
	}
	in := h.pending(t)
	if in.IdempotencyKey != "claude-code:"+r.Result.SessionID+":toolu_00" {
		t.Errorf("idempotency_key %q", in.IdempotencyKey)
	}

	// Still undecided: resuming defers again, and asks nothing new.
	again := claudetest.Run(t, claudetest.Options{API: api, Settings: settings, Env: h.env(), Again: r, Args: []string{"--resume", r.Result.SessionID}})
	if _, ok := readFile(t, again, "out.txt"); ok {
		t.Fatal("out.txt exists after a second defer")
	}
	if n := len(h.interactions(t)); n != 1 {
		t.Errorf("%d questions after resuming, want the same one", n)
	}

	h.answer(t, `"approve"`)
	done := claudetest.Run(t, claudetest.Options{API: api, Settings: settings, Env: h.env(), Again: r, Args: []string{"--resume", r.Result.SessionID}})
	checkRun(t, done)
	if out, _ := readFile(t, done, "out.txt"); out != "later\n" {
		t.Errorf("out.txt = %q after the answer and --resume, want the approved command's output", out)
	}
	list := h.interactions(t)
	if len(list) != 1 || list[0].Status != hitl.StatusAnswered {
		t.Errorf("questions %d (first %s), want the one, answered", len(list), list[0].Status)
	}
}
