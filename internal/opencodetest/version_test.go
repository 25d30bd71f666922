package opencodetest

import (
	"os/exec"
	"strings"
	"testing"
)

// TestVersion: the installed OpenCode is the version the fixtures were
// confirmed against (test.sh pins the same one).
func TestVersion(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(RequireBinary(t), "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != Version {
		t.Errorf("opencode --version = %q; want %s: install that version, or confirm the fixtures against this one (go test -update) and update Version, test.sh and testdata/README.md", got, Version)
	}
}
