package copilottest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl/internal/agenttest"
)

// TestHookEnvironment: a hook gets the CLI's whole environment, a token
// among it, on a GitHub Actions runner too (GITHUB_SHA set), plus
// COPILOT_PROJECT_DIR and CLAUDE_PROJECT_DIR.
func TestHookEnvironment(t *testing.T) {
	t.Parallel()
	api := NewAPI(t, bashTurns("echo hi > out.txt")...)
	file := filepath.Join(t.TempDir(), "env")
	hook := CommandHookConfig("cat >/dev/null; env >"+agenttest.ShellQuote(file)+"; echo '{}'", 30)
	r := Run(t, Options{API: api, Prompt: "write hi", Env: []string{"HITL_TOKEN=t0ken", "GITHUB_SHA=0000", "GITHUB_ACTIONS=true"}, Settings: Hooks("preToolUse", "", hook)})
	checkExit(t, r)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the hook did not run: %v", err)
	}
	var got []string
	for _, line := range strings.Split(strings.ReplaceAll(string(b), r.Dir, "$CWD"), "\n") {
		for _, name := range []string{"HITL_TOKEN=", "COPILOT_PROJECT_DIR=", "CLAUDE_PROJECT_DIR="} {
			if strings.HasPrefix(line, name) {
				got = append(got, line)
			}
		}
	}
	slices.Sort(got)
	want := []string{"CLAUDE_PROJECT_DIR=$CWD", "COPILOT_PROJECT_DIR=$CWD", "HITL_TOKEN=t0ken"}
	if !slices.Equal(got, want) {
		t.Errorf("the hook's environment holds %q; want %q", got, want)
	}
}

// TestHookMatcher: a hook's matcher is a regular expression that must
// match the whole tool name, case included; but one with parentheses, or
// ending in $, matches nothing.
func TestHookMatcher(t *testing.T) {
	cases := []struct {
		matcher string
		wantRun bool
	}{
		{"", true},
		{"bash", true},
		{"ba", false},
		{"b.*", true},
		{"^bash", true},
		{"bash|create", true},
		{"create|edit", false},
		{"Bash", false},
		{"shell", false},
		// Parentheses and a closing $ never match: write alternatives
		// bare.
		{"(bash|create)", false},
		{"^bash$", false},
		{"^(bash|create|edit)$", false},
	}
	for _, tc := range cases {
		t.Run(tc.matcher, func(t *testing.T) {
			t.Parallel()
			api := NewAPI(t, bashTurns("echo hi > out.txt")...)
			hook := NewCommandHook(t, HookReply{Stdout: fixture(t, "pretooluse-deny.json")})
			r := Run(t, Options{API: api, Prompt: "write hi", Settings: Hooks("preToolUse", tc.matcher, hook.Hook(30))})
			checkExit(t, r)
			if ran := len(hook.Inputs(t)) == 1; ran != tc.wantRun {
				t.Errorf("the hook ran: %v; want %v", ran, tc.wantRun)
			}
		})
	}
}
