package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl/internal/refused"
	"github.com/hitl-sh/hitl/internal/turns"
)

// runHookWith runs hitl hook claude-code with args and stdin.
func runHookWith(stdin string, args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	code = runClaudeCodeHook(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}

func TestHookPrintSettings(t *testing.T) {
	turns.Parallel(t)
	cases := []struct {
		args []string
		want string
	}{
		{nil, `{"hooks": {"PreToolUse": [{"matcher": "Bash|Edit|Write|MultiEdit|NotebookEdit", "hooks": [
			{"type": "command", "command": "hitl hook claude-code --timeout 540s", "timeout": 600}]}]}}`},
		{[]string{"--timeout", "20m", "--agent", "ci bot", "--on-error", "ask", "--server", "http://hitl:7878", "--event", "PermissionRequest", "--matcher", "Bash"},
			`{"hooks": {"PermissionRequest": [{"matcher": "Bash", "hooks": [
			{"type": "command", "command": "hitl hook claude-code --timeout 1200s --agent 'ci bot' --on-error ask --server http://hitl:7878", "timeout": 1260}]}]}}`},
		{[]string{"--http"}, `{"hooks": {"PreToolUse": [{"matcher": "Bash|Edit|Write|MultiEdit|NotebookEdit", "hooks": [
			{"type": "http", "url": "http://127.0.0.1:7878/api/v1/hooks/claude-code?timeout=540", "headers": {"Authorization": "Bearer $HITL_TOKEN"},
			 "allowedEnvVars": ["HITL_TOKEN"], "timeout": 600}]}]}}`},
		{[]string{"--http", "--timeout", "90.5s", "--agent", "ci bot", "--server", "https://hitl.example.com/"}, `{"hooks": {"PreToolUse": [{"matcher": "Bash|Edit|Write|MultiEdit|NotebookEdit", "hooks": [
			{"type": "http", "url": "https://hitl.example.com/api/v1/hooks/claude-code?agent=ci+bot&timeout=90.5", "headers": {"Authorization": "Bearer $HITL_TOKEN"},
			 "allowedEnvVars": ["HITL_TOKEN"], "timeout": 151}]}]}}`},
	}
	for _, tc := range cases {
		stdout, stderr, code := runHookWith("", append([]string{"--print-settings"}, tc.args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, stderr)
		}
		var got, want any
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("%v: %s is not JSON: %v", tc.args, stdout, err)
		}
		if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
			t.Fatal(err)
		}
		if g, w := mustMarshal(t, got), mustMarshal(t, want); g != w {
			t.Errorf("%v:\n got %s\nwant %s", tc.args, g, w)
		}
	}
}

// TestHookExitCodes: a decision always exits 0; what is not a hook's input
// exits 2, which blocks the call; an event hitl does not answer exits 1,
// which Claude Code reports and ignores.
func TestHookExitCodes(t *testing.T) {
	turns.Parallel(t)
	down := refused.URL(t)
	preToolUse := `{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "toolu_01"}`
	cases := []struct {
		name, stdin string
		args        []string
		code        int
		stdout      string // a prefix
		stderr      string // a substring
	}{
		{"hitl down", preToolUse, []string{"--server", down}, 0,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"hitl could not get a decision on this Bash call, so it is denied: cannot reach the hitl server`,
			"cannot reach the hitl server"},
		{"hitl down, ask", preToolUse, []string{"--server", down, "--on-error", "ask"}, 0,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask",`, ""},
		{"no tool name", `{"hook_event_name": "PermissionRequest", "tool_input": {}}`, []string{"--server", down}, 0,
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"hitl could not get a decision on this tool call, so it is denied: hitl refused the question (the tool call has no tool name)."}}}`, ""},
		{"not JSON", "hello", nil, 2, "", "the hook input is not a JSON object"},
		{"no input", "", nil, 2, "", "the hook input is not a JSON object"},
		{"other event", `{"hook_event_name": "Stop"}`, nil, 1, "", "not Stop"},
		{"bad flag", preToolUse, []string{"--nope"}, 2, "", "flag provided but not defined"},
		{"bad on-error", preToolUse, []string{"--on-error", "allow"}, 2, "", "--on-error must be deny or ask"},
		{"bad timeout", preToolUse, []string{"--timeout", "0s"}, 2, "", "--timeout must be at least 1s"},
		{"extra argument", preToolUse, []string{"PreToolUse"}, 2, "", "unexpected arguments: PreToolUse"},
	}
	for _, tc := range cases {
		stdout, stderr, code := runHookWith(tc.stdin, tc.args...)
		if code != tc.code || !strings.HasPrefix(stdout, tc.stdout) || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("%s: exit %d\nstdout %s\nstderr %s\nwant exit %d, stdout %q…, stderr …%q…", tc.name, code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
		}
		if tc.code != 0 && stdout != "" {
			t.Errorf("%s: stdout %q, want nothing with exit %d", tc.name, stdout, tc.code)
		}
	}
}

// TestHookCommand: hitl hook without claude-code shows what it takes.
func TestHookCommand(t *testing.T) {
	turns.Parallel(t)
	stdout, stderr, code := runHitl("hook")
	if code != 2 || stdout != "" || !strings.Contains(stderr, "claude-code") {
		t.Errorf("hitl hook: exit %d, stdout %q, stderr %q; want 2 and the agents", code, stdout, stderr)
	}
	if _, stderr, code := runHitl("hook", "claude-code", "-h"); code != 0 || !strings.Contains(stderr, "--print-settings") {
		t.Errorf("hitl hook claude-code -h: exit %d, %q", code, stderr)
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReadmeClaudeCodeSnippets: the README's Claude Code settings are what
// --print-settings prints (the real-CLI tests run those), and its MCP
// configuration is the one the permission prompt tests give Claude Code.
func TestReadmeClaudeCodeSnippets(t *testing.T) {
	turns.Parallel(t)
	for name, args := range map[string][]string{
		"claude-code-hook":      {"--print-settings"},
		"claude-code-http-hook": {"--print-settings", "--http"},
	} {
		stdout, stderr, code := runHookWith("", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		if got, want := readmeSnippet(t, name), strings.TrimSpace(stdout); got != want {
			t.Errorf("README snippet %s:\n%s\nwant what hitl hook claude-code %s prints:\n%s", name, got, strings.Join(args, " "), want)
		}
	}
	srv := startServer(t)
	cfg := readmeMCPConfig(t, defaultServerURL)
	checkMCPURL(t, srv, cfg["url"].(string))
}

// readmeMCPConfig returns the hitl server's entry of the README's
// .mcp.json for Claude Code, pointed at base instead of the default
// server.
func readmeMCPConfig(t *testing.T, base string) map[string]any {
	t.Helper()
	var config struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	snippet := strings.ReplaceAll(readmeSnippet(t, "claude-code-mcp"), defaultServerURL, base)
	if err := json.Unmarshal([]byte(snippet), &config); err != nil {
		t.Fatalf("README snippet claude-code-mcp: %v", err)
	}
	s, ok := config.MCPServers["hitl"]
	if !ok || len(config.MCPServers) != 1 || s["type"] != "http" {
		t.Fatalf("README snippet claude-code-mcp: %v, want one HTTP server named hitl", config.MCPServers)
	}
	return s
}

// TestHookPrintSettingsWarnsOfPlainHTTP: settings that send the token and
// every reviewed call to a server over plain HTTP on the network print a
// warning that says to use https; loopback and https print none.
func TestHookPrintSettingsWarnsOfPlainHTTP(t *testing.T) {
	turns.Parallel(t)
	for _, tc := range []struct {
		server string
		warn   bool
	}{
		{"http://hitl.example.com:7878", true},
		{"http://10.0.0.5:7878/", true},
		{"HTTP://hitl.example.com", true},
		{"https://hitl.example.com", false},
		{"http://127.0.0.1:7878", false},
		{"http://localhost:7878", false},
		{"http://hitl.localhost:7878", false},
		{"http://[::1]:7878", false},
	} {
		for _, mode := range [][]string{nil, {"--http"}} {
			args := append([]string{"--print-settings", "--server", tc.server}, mode...)
			stdout, stderr, code := runHookWith("", args...)
			if code != 0 || !json.Valid([]byte(stdout)) {
				t.Fatalf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
			}
			warned := strings.Contains(stderr, "warning:") && strings.Contains(stderr, "https://")
			if warned != tc.warn {
				t.Errorf("%v: stderr %q; want a warning to use https: %v", args, stderr, tc.warn)
			}
		}
	}
}
