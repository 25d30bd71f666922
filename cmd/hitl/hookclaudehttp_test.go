package main

import (
	"strings"
	"testing"

	"github.com/hitl-sh/hitl/internal/claudetest"
	"github.com/hitl-sh/hitl/internal/refused"
	"github.com/hitl-sh/hitl/internal/turns"
)

// hitl's HTTP hook endpoint and its permission_prompt MCP tool, against
// the real CLI.

// httpHook returns the settings hitl hook claude-code --print-settings
// --http prints for event and the server at url: the token sent from
// HITL_TOKEN.
func httpHook(t *testing.T, event, url string) map[string]any {
	t.Helper()
	return printedSettings(t, "--http", "--event", event, "--matcher", "Bash|Write", "--timeout", "50s", "--server", url)
}

func TestClaudeCodeHTTPHook(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	cases := []struct {
		name, event, answer string
		wantOut, want       string
	}{
		{name: "PreToolUse approve", event: "PreToolUse", answer: `"approve"`, wantOut: "hi\n", want: ran},
		{name: "PreToolUse edit", event: "PreToolUse", answer: `{"decision": "edit", "args": {"command": "echo edited > out.txt"}}`, wantOut: "edited\n", want: ran},
		{name: "PreToolUse reject", event: "PreToolUse", answer: `{"decision": "reject", "message": "not today"}`,
			want: "PreToolUse:Bash hook error: The person reviewing this Bash call in hitl (alice) rejected it: not today"},
		{name: "PermissionRequest respond", event: "PermissionRequest", answer: `{"decision": "respond", "message": "ask me tomorrow"}`,
			want: "The person reviewing this Bash call in hitl (alice) did not let it run, and replied: ask me tomorrow"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			turns.Parallel(t)
			h := startClaudeHitl(t)
			api := claudetest.NewAPI(t, bash("echo hi > out.txt")...)
			p := claudetest.Start(t, claudetest.Options{API: api, Prompt: "write hi", Env: h.env(),
				Settings: httpHook(t, tc.event, h.URL)})
			in := h.answer(t, tc.answer)
			r := p.Wait()
			var denied []string
			if tc.wantOut == "" {
				denied = []string{"toolu_00"}
			}
			checkRun(t, r, denied...)
			if out, _ := readFile(t, r, "out.txt"); out != tc.wantOut {
				t.Errorf("out.txt = %q, want %q", out, tc.wantOut)
			}
			if got, _ := toolResult(t, api, r, "toolu_00"); got != tc.want {
				t.Errorf("tool_result %q\nwant %q", got, tc.want)
			}
			if in.CreatedBy != "claude" || in.SourceAgent != "claude-code" || in.Timeout != 50 {
				t.Errorf("created_by %q, source_agent %q, timeout %v; want the agent token's, claude-code, 50 s", in.CreatedBy, in.SourceAgent, in.Timeout)
			}
		})
	}
}

// TestClaudeCodeHTTPHookFailsOpen pins what the README warns of: Claude
// Code ignores an HTTP hook that fails, so with hitl down the call runs as
// if there were no hook.
func TestClaudeCodeHTTPHookFailsOpen(t *testing.T) {
	turns.Parallel(t)
	h := startClaudeHitl(t)
	api := claudetest.NewAPI(t, bash("echo hi > out.txt")...)
	r := claudetest.Run(t, claudetest.Options{API: api, Prompt: "write hi", Env: h.env(),
		Settings: httpHook(t, "PreToolUse", refused.URL(t)), Args: []string{"--permission-mode", "acceptEdits"}})
	checkRun(t, r)
	if out, _ := readFile(t, r, "out.txt"); out != "hi\n" {
		t.Errorf("out.txt = %q; want the command's output (Claude Code ignored the failing hook)", out)
	}
}

// TestClaudeCodeHTTPHookWithoutToken: a hook request hitl refuses (here:
// no token) is answered with a deny, not a 401 that Claude Code would
// ignore: the call does not run, and the model reads why.
func TestClaudeCodeHTTPHookWithoutToken(t *testing.T) {
	turns.Parallel(t)
	h := startClaudeHitl(t)
	api := claudetest.NewAPI(t, bash("echo hi > out.txt")...)
	r := claudetest.Run(t, claudetest.Options{API: api, Prompt: "write hi",
		Settings: httpHook(t, "PreToolUse", h.URL), Args: []string{"--permission-mode", "acceptEdits"}})
	checkRun(t, r, "toolu_00")
	if out, ok := readFile(t, r, "out.txt"); ok {
		t.Errorf("out.txt = %q; want no file: the refused hook denies", out)
	}
	if got, _ := toolResult(t, api, r, "toolu_00"); !strings.Contains(got, "hitl refused the credentials") {
		t.Errorf("tool_result %q, want the refusal", got)
	}
}

// mcpHitl returns the MCP configuration of hitl's server at url for
// Claude Code: hitl mcp over stdio, or the README's, /mcp over streamable
// HTTP with the agent token from HITL_TOKEN.
func mcpHitl(t *testing.T, transport, url string) map[string]any {
	if transport == "stdio" {
		return claudetest.MCPServers("hitl", map[string]any{"type": "stdio", "command": hitlBin, "args": []string{"mcp"},
			"env": map[string]string{"HITL_URL": url}})
	}
	return claudetest.MCPServers("hitl", readmeMCPConfig(t, url))
}

// permissionPrompt is the flag that makes hitl's tool Claude Code's
// permission prompt.
var permissionPrompt = []string{"--permission-prompt-tool", "mcp__hitl__permission_prompt"}

func TestClaudeCodePermissionPromptTool(t *testing.T) {
	turns.Idle(t) // the subtests take the turns
	cases := []struct {
		name, answer, wantOut, want string
	}{
		{name: "approve", answer: `"approve"`, wantOut: "hi\n", want: ran},
		{name: "edit", answer: `{"decision": "edit", "args": {"command": "echo edited > out.txt"}}`, wantOut: "edited\n", want: ran},
		{name: "reject", answer: `{"decision": "reject", "message": "not here"}`,
			want: "The person reviewing this Bash call in hitl (alice) rejected it: not here"},
	}
	for _, transport := range []string{"stdio", "http"} {
		for _, tc := range cases {
			t.Run(transport+"/"+tc.name, func(t *testing.T) {
				turns.Parallel(t)
				h := startClaudeHitl(t)
				api := claudetest.NewAPI(t, bash("echo hi > out.txt")...)
				p := claudetest.Start(t, claudetest.Options{API: api, Prompt: "write hi", MCPConfig: mcpHitl(t, transport, h.URL), Args: permissionPrompt, Env: h.env()})
				in := h.answer(t, tc.answer)
				r := p.Wait()
				var denied []string
				if tc.wantOut == "" {
					denied = []string{"toolu_00"}
				}
				checkRun(t, r, denied...)
				if out, _ := readFile(t, r, "out.txt"); out != tc.wantOut {
					t.Errorf("out.txt = %q, want %q", out, tc.wantOut)
				}
				if got, _ := toolResult(t, api, r, "toolu_00"); got != tc.want {
					t.Errorf("tool_result %q\nwant %q", got, tc.want)
				}
				// Claude Code names itself claude-code, as the hook does.
				if in.SourceAgent != "claude-code" || in.IdempotencyKey != "claude-code:toolu_00" || !strings.Contains(in.Context, "permission prompt") {
					t.Errorf("source_agent %q, idempotency_key %q, context %q", in.SourceAgent, in.IdempotencyKey, in.Context)
				}
			})
		}
	}
}

// TestClaudeCodePermissionPromptToolDown: hitl mcp denies, with the
// reason, when the server it forwards to is down.
func TestClaudeCodePermissionPromptToolDown(t *testing.T) {
	turns.Parallel(t)
	h := startClaudeHitl(t)
	api := claudetest.NewAPI(t, bash("echo hi > out.txt")...)
	r := claudetest.Run(t, claudetest.Options{API: api, Prompt: "write hi", MCPConfig: mcpHitl(t, "stdio", refused.URL(t)), Args: permissionPrompt, Env: h.env()})
	checkRun(t, r, "toolu_00")
	if out, ok := readFile(t, r, "out.txt"); ok {
		t.Errorf("out.txt = %q, want none: the call was denied", out)
	}
	want := "hitl could not get a decision on this Bash call, so it is denied: cannot reach the hitl server (POST http://127.0.0.1:"
	if got, _ := toolResult(t, api, r, "toolu_00"); !strings.HasPrefix(got, want) {
		t.Errorf("tool_result %q\nwant it to start with %q", got, want)
	}
}

// TestClaudeCodePermissionPromptToolUnreachable: when /mcp cannot be
// reached at all, Claude Code ends the run at its first permission check,
// and nothing runs.
func TestClaudeCodePermissionPromptToolUnreachable(t *testing.T) {
	turns.Parallel(t)
	h := startClaudeHitl(t)
	api := claudetest.NewAPI(t, bash("echo hi > out.txt")...)
	r := claudetest.Run(t, claudetest.Options{API: api, Prompt: "write hi", MCPConfig: mcpHitl(t, "http", refused.URL(t)), Args: permissionPrompt, Env: h.env()})
	if r.ExitCode == 0 || !strings.Contains(string(r.Stderr), "mcp__hitl__permission_prompt (passed via --permission-prompt-tool) not found") {
		t.Errorf("exit %d, stderr %s; want the run ended: the tool is not found", r.ExitCode, r.Stderr)
	}
	if out, ok := readFile(t, r, "out.txt"); ok {
		t.Errorf("out.txt = %q, want none: nothing may run", out)
	}
}
