package copilottest

import (
	"os/exec"
	"strings"
	"testing"
)

// TestVersion: the installed CLI is the version the fixtures were confirmed
// against (test.sh pins the same one).
func TestVersion(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(RequireBinary(t), "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n"); got != "GitHub Copilot CLI "+Version+"." {
		t.Errorf("copilot --version = %q; want GitHub Copilot CLI %s.: install that version, or confirm the fixtures against this one (go test -update) and update Version, test.sh and testdata/README.md", got, Version)
	}
}
