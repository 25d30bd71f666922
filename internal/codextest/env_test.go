package codextest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl/internal/agenttest"
)

// TestHookEnvironment: a hook gets Codex's whole environment (a token
// included, on a GitHub Actions runner too) and runs in the working
// directory.
func TestHookEnvironment(t *testing.T) {
	t.Parallel()
	api := NewAPI(t, execTurns("echo hi > out.txt")...)
	file := filepath.Join(t.TempDir(), "env")
	hook := CommandHookConfig("cat >/dev/null; { pwd; env; } >"+agenttest.ShellQuote(file)+"; echo '{}'", 30)
	r := Run(t, Options{API: api, Prompt: "write hi", Env: []string{"HITL_TOKEN=t0ken", "GITHUB_SHA=0000"}, Hooks: Hooks("PreToolUse", "^Bash$", hook)})
	checkExit(t, r)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the hook did not run: %v", err)
	}
	lines := strings.Split(string(b), "\n")
	if lines[0] != r.Dir {
		t.Errorf("the hook ran in %s; want the working directory %s", lines[0], r.Dir)
	}
	for _, want := range []string{"HITL_TOKEN=t0ken", "CODEX_HOME=" + r.Home} {
		if !strings.Contains(string(b), "\n"+want+"\n") {
			t.Errorf("the hook's environment lacks %s", want)
		}
	}
}
