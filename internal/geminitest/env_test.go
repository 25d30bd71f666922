package geminitest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl/internal/agenttest"
)

// TestHookEnvironment: a hook gets the CLI's environment, plus
// GEMINI_SESSION_ID, GEMINI_CWD, GEMINI_PROJECT_DIR and CLAUDE_PROJECT_DIR;
// but when GITHUB_SHA is set (a GitHub Actions runner), every variable not
// on the CLI's short list (PATH, HOME, …) is removed, a token among them.
// The hook object's "env" is added after that.
func TestHookEnvironment(t *testing.T) {
	cases := []struct {
		name     string
		env      []string
		hookEnv  map[string]any
		wantVars []string // of HITL_TOKEN, GEMINI_CWD
	}{
		{name: "plain", env: []string{"HITL_TOKEN=t0ken"}, wantVars: []string{"HITL_TOKEN=t0ken", "GEMINI_CWD=$CWD"}},
		{name: "GitHub Actions", env: []string{"HITL_TOKEN=t0ken", "GITHUB_SHA=0000"}, wantVars: []string{"GEMINI_CWD=$CWD"}},
		{name: "GitHub Actions, the hook's env", env: []string{"GITHUB_SHA=0000"}, hookEnv: map[string]any{"HITL_TOKEN": "t0ken"},
			wantVars: []string{"HITL_TOKEN=t0ken", "GEMINI_CWD=$CWD"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := NewAPI(t, shellTurns("echo hi > out.txt")...)
			file := filepath.Join(t.TempDir(), "env")
			hook := CommandHookConfig("cat >/dev/null; env >"+agenttest.ShellQuote(file)+"; echo '{}'", 30000)
			if tc.hookEnv != nil {
				hook["env"] = tc.hookEnv
			}
			r := Run(t, Options{API: api, Prompt: "write hi", Env: tc.env, Settings: Hooks("BeforeTool", "run_shell_command", hook)})
			checkExit(t, r)
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("the hook did not run: %v", err)
			}
			var got []string
			for _, line := range strings.Split(strings.ReplaceAll(string(b), r.Dir, "$CWD"), "\n") {
				if strings.HasPrefix(line, "HITL_TOKEN=") || strings.HasPrefix(line, "GEMINI_CWD=") {
					got = append(got, line)
				}
			}
			slices.Sort(got)
			slices.Sort(tc.wantVars)
			if !slices.Equal(got, tc.wantVars) {
				t.Errorf("the hook's environment holds %q; want %q", got, tc.wantVars)
			}
		})
	}
}
