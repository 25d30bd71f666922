package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/claudetest"
	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/mcpserver"
	"github.com/hitl-sh/hitl/tools"
)

// hitl mcp --channel as Claude Code's permission relay, against the real
// CLI running interactively in tmux: Claude Code shows its permission
// prompt at the terminal and relays it to hitl; the person answers in
// hitl, or at the terminal.

// The screen's landmarks.
const (
	devChannelsDialog = "I am using this for local development"
	permissionDialog  = "Do you want to proceed?"
	mcpConnected      = "✔ hitl" // /mcp's line for the connected server
)

// startChannel starts Claude Code in tmux with hitl mcp --channel as the
// development channel server:hitl, in the default permission mode, and
// types prompt once it is ready.
func startChannel(t *testing.T, h *claudeHitl, api *claudetest.API, prompt string) *claudetest.Terminal {
	t.Helper()
	mcp := claudetest.MCPServers("hitl", map[string]any{"type": "stdio", "command": hitlBin, "args": []string{"mcp", "--channel"},
		"env": map[string]string{"HITL_URL": h.URL, "HITL_TOKEN": h.agentToken}})
	term := claudetest.StartTerminal(t, claudetest.Options{API: api, MCPConfig: mcp,
		Args: []string{"--dangerously-load-development-channels", "server:hitl", "--permission-mode", "default"}}, claudetest.Channels)
	term.WaitFor(devChannelsDialog)
	term.Press("Enter")
	term.WaitFor("? for shortcuts")
	// A permission prompt shown before the channel has connected may not
	// be relayed, and on a busy machine hitl mcp can connect after the
	// prompt shows. /mcp lists it with a check mark once it has.
	term.Type("/mcp")
	term.Press("Enter")
	term.WaitFor(mcpConnected)
	term.PressUntilGone(mcpConnected, "Escape")
	term.Type(prompt)
	term.Press("Enter")
	term.WaitFor(permissionDialog)
	return term
}

// TestClaudeCodeChannelApprove: the person approves in hitl; the prompt at
// the terminal closes and the command runs.
func TestClaudeCodeChannelApprove(t *testing.T) {
	turns.Parallel(t)
	h := startClaudeHitl(t)
	api := claudetest.NewAPI(t, bash("echo hi > out.txt")...)
	term := startChannel(t, h, api, "write hi")
	in := h.answer(t, `"approve"`)
	term.WaitGone(permissionDialog)
	term.WaitFor("finished")
	if got, _, _ := api.ToolResult("toolu_00"); got != ran {
		t.Errorf("tool_result %q, want %q", got, ran)
	}
	if in.Type != hitl.TypeAction || in.Action.Name != "Bash" || in.Action.Description != "Run echo hi > out.txt" {
		t.Errorf("asked %s %+v, want the action Bash", in.Type, in.Action)
	}
	var args map[string]string
	json.Unmarshal(in.Action.Args, &args)
	if !strings.Contains(args["input_preview"], `"command": "echo hi > out.txt"`) {
		t.Errorf("args %s, want the preview of the command", in.Action.Args)
	}
	if in.SourceAgent != tools.ClaudeCodeAgent || in.CreatedBy != "claude" || len(in.Decisions) != 2 {
		t.Errorf("source_agent %q, created_by %q, decisions %v; want claude-code, the agent token, approve and reject", in.SourceAgent, in.CreatedBy, in.Decisions)
	}
}

// TestClaudeCodeChannelReject: the person rejects in hitl; the command
// does not run.
func TestClaudeCodeChannelReject(t *testing.T) {
	turns.Parallel(t)
	h := startClaudeHitl(t)
	api := claudetest.NewAPI(t, bash("echo hi > out.txt")...)
	term := startChannel(t, h, api, "write hi")
	h.answer(t, `{"decision": "reject", "message": "not here"}`)
	term.WaitGone(permissionDialog)
	term.WaitFor("Not run · rejected")
	term.WaitFor("finished")
	if got, isError, ok := api.ToolResult("toolu_00"); !ok || !isError || !strings.Contains(got, "Denied via channel hitl") {
		t.Errorf("tool_result %q (is_error %v, sent %v), want the channel's deny", got, isError, ok)
	}
	if _, ok := readFile(t, &claudetest.Output{Dir: term.Dir}, "out.txt"); ok {
		t.Error("out.txt was written: the rejected command ran")
	}
}

// TestClaudeCodeChannelTerminalFirst: the person at the terminal answers
// first. Claude Code tells the channel nothing, so the question ends when
// Claude Code relays its next prompt, and that one when the session ends.
func TestClaudeCodeChannelTerminalFirst(t *testing.T) {
	turns.Parallel(t)
	h := startClaudeHitl(t)
	api := claudetest.NewAPI(t, bash("echo one > one.txt", "echo two > two.txt")...)
	term := startChannel(t, h, api, "write two files")
	first := h.pending(t)
	term.PressUntilGone("Run echo one > one.txt", "Enter") // 1. Yes
	term.WaitFor("Run echo two > two.txt")                 // the second prompt
	term.WaitFor(permissionDialog)
	ended := h.ended(t, first.ID)
	if ended.Status != hitl.StatusCancelled || ended.Result.Reason != mcpserver.ReasonAnsweredElsewhere {
		t.Errorf("first question %s (%+v), want cancelled: %s", ended.Status, ended.Result, mcpserver.ReasonAnsweredElsewhere)
	}
	if out, _ := readFile(t, &claudetest.Output{Dir: term.Dir}, "one.txt"); out != "one\n" {
		t.Errorf("one.txt = %q, want the command approved at the terminal to have run", out)
	}
	second := h.pending(t)
	if second.ID == first.ID {
		t.Fatal("no question for the second prompt")
	}
	term.Press("Escape") // the second prompt: cancelled at the terminal
	term.WaitGone(permissionDialog)
	term.Type("/exit")
	term.Press("Enter")
	term.WaitExit()
	ended = h.ended(t, second.ID)
	if ended.Status != hitl.StatusCancelled || ended.Result.Reason != mcpserver.ReasonSessionEnded {
		t.Errorf("second question %s (%+v), want cancelled: %s", ended.Status, ended.Result, mcpserver.ReasonSessionEnded)
	}
	if _, ok := readFile(t, &claudetest.Output{Dir: term.Dir}, "two.txt"); ok {
		t.Error("two.txt was written: nobody approved it")
	}
}

// ended waits for interaction id to end, and returns it.
func (h *claudeHitl) ended(t *testing.T, id string) *hitl.Interaction {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	in, err := h.Broker.Wait(ctx, id)
	if err != nil {
		t.Fatalf("wait for %s to end: %v", id, err)
	}
	return in
}
