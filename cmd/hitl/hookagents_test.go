package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl/agents"
	"github.com/hitl-sh/hitl/internal/turns"
)

// runAgentHookWith runs hitl hook <agent> in this process with args and
// stdin.
func runAgentHookWith(a *agents.Agent, stdin string, args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	code = runAgentHook(context.Background(), a, args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}

// TestAgentHookPrintSettings: the hook's timeout stays a minute above
// the question's, in each agent's unit, and the command carries the flags
// that change what it does.
func TestAgentHookPrintSettings(t *testing.T) {
	t.Setenv("CODEX_HOME", t.TempDir())
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		agent *agents.Agent
		args  []string
		want  string
	}{
		{agents.Codex, []string{"--timeout", "20m", "--agent", "ci bot", "--server", "http://hitl:7878", "--matcher", "^mcp__.*"},
			`{"hooks":{"PreToolUse":[{"matcher":"^mcp__.*","hooks":[{"type":"command","command":"EXE hook codex --timeout 1200s --agent 'ci bot' --server http://hitl:7878","timeout":1260}]}]}}`},
		{agents.Gemini, []string{"--timeout", "90.5s", "--on-error", "ask", "--server", "https://hitl.example.com"},
			`{"hooks":{"BeforeTool":[{"matcher":"^(run_shell_command|write_file|replace)$","hooks":[{"type":"command","command":"EXE hook gemini-cli --timeout 90.5s --on-error ask --server https://hitl.example.com","timeout":150500,
			"env":{"HITL_TOKEN":"${HITL_TOKEN:-}","HITL_URL":"${HITL_URL:-https://hitl.example.com}"}}]}]}}`},
		{agents.Copilot, []string{"--timeout", "90.5s", "--agent", "ci bot", "--matcher", "bash|notes-.*"},
			`{"hooks":{"preToolUse":[{"type":"command","bash":"EXE hook copilot-cli --timeout 90.5s --agent 'ci bot'","timeoutSec":151,"matcher":"bash|notes-.*"}]}}`},
		{agents.Cursor, []string{"--timeout", "2m", "--on-error", "ask", "--wait-at-most", "30s"},
			`{"version":1,"hooks":{"beforeMCPExecution":[{"command":"EXE hook cursor --timeout 120s --on-error ask --wait-at-most 30s","timeout":90}],
			"beforeReadFile":[{"command":"EXE hook cursor --timeout 120s --on-error ask --wait-at-most 30s","timeout":90}],
			"beforeShellExecution":[{"command":"EXE hook cursor --timeout 120s --on-error ask --wait-at-most 30s","timeout":90}]}}`},
	}
	for _, tc := range cases {
		stdout, stderr, code := runAgentHookWith(tc.agent, "", append([]string{"--print-settings"}, tc.args...)...)
		if code != 0 {
			t.Fatalf("%s %v: exit %d: %s", tc.agent.Name, tc.args, code, stderr)
		}
		stdout = strings.ReplaceAll(stdout, shellWord(exe), "EXE")
		var got, want any
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("%s: %s is not JSON: %v", tc.agent.Name, stdout, err)
		}
		if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
			t.Fatal(err)
		}
		if g, w := mustMarshal(t, got), mustMarshal(t, want); g != w {
			t.Errorf("%s %v:\n got %s\nwant %s", tc.agent.Name, tc.args, g, w)
		}
		if !strings.Contains(stderr, "runs the call when its hook") && !strings.Contains(stderr, "was not seen") {
			t.Errorf("%s: the notes do not say what fails open:\n%s", tc.agent.Name, stderr)
		}
	}
}

// TestAgentHookFlags: flags that cannot work exit 2, which blocks the call.
func TestAgentHookFlags(t *testing.T) {
	turns.Parallel(t)
	cases := []struct {
		agent  *agents.Agent
		args   []string
		stderr string
	}{
		{agents.Codex, []string{"--on-error", "ask"}, `--on-error must be deny: Codex runs a call its hook answers "ask"`},
		{agents.Gemini, []string{"--on-error", "allow"}, "--on-error must be deny or ask"},
		{agents.Codex, []string{"--timeout", "0s"}, "--timeout must be at least 1s"},
		{agents.Gemini, []string{"--matcher", "("}, "--matcher must be a regular expression"},
		{agents.Codex, []string{"extra"}, "unexpected arguments: extra"},
		{agents.Gemini, []string{"--nope"}, "flag provided but not defined"},
		{agents.Copilot, []string{"--on-error", "ask"}, `--on-error must be deny: headless, Copilot CLI denies a call its hook answers "ask"`},
		{agents.Copilot, []string{"--matcher", "^(bash|edit)$"}, "a matcher with parentheses, or ending in $, matches no tool in Copilot CLI"},
		{agents.Copilot, []string{"--matcher", "bash$"}, "a matcher with parentheses, or ending in $"},
		{agents.OpenCode, []string{"--on-error", "ask"}, "--on-error must be deny: hitl's OpenCode plugin cannot ask"},
		{agents.OpenCode, []string{"--print-settings"}, "flag provided but not defined: -print-settings"},
		{agents.Cursor, []string{"--matcher", "x"}, "flag provided but not defined: -matcher"},
		{agents.Cursor, []string{"--on-error", "allow"}, "--on-error must be deny or ask"},
	}
	for _, tc := range cases {
		_, stderr, code := runAgentHookWith(tc.agent, `{}`, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("%s %v: exit %d, stderr %q; want 2 and %q", tc.agent.Name, tc.args, code, stderr, tc.stderr)
		}
	}
}

// TestAgentDocsSnippets: the settings the agents' pages show are what
// --print-settings prints (for hitl installed as /usr/local/bin/hitl).
func TestAgentDocsSnippets(t *testing.T) {
	t.Setenv("CODEX_HOME", t.TempDir())
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []*agents.Agent{agents.Codex, agents.Gemini, agents.Copilot, agents.OpenCode, agents.Cursor} {
		flag, block := "--print-settings", "```json\n"
		if a == agents.OpenCode {
			flag, block = "--print-plugin", "```js\n"
		}
		stdout, stderr, code := runAgentHookWith(a, "", flag)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", a.Name, code, stderr)
		}
		want := strings.TrimSpace(strings.ReplaceAll(stdout, shellWord(exe), "/usr/local/bin/hitl"))
		doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "agents", a.Name+".md"))
		if err != nil {
			t.Fatal(err)
		}
		_, rest, _ := strings.Cut(string(doc), block)
		got, _, _ := strings.Cut(rest, "\n```")
		if got != want {
			t.Errorf("docs/agents/%s.md shows\n%s\nwant what --print-settings prints:\n%s", a.Name, got, want)
		}
	}
}
