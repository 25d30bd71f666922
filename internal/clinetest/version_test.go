package clinetest

import (
	"os/exec"
	"strings"
	"testing"
)

// TestVersion: the installed Cline is the version the hooks were read
// against.
func TestVersion(t *testing.T) {
	bin := RequireBinary(t)
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), Version) {
		t.Fatalf("cline --version: %s (%v); want %s", out, err, Version)
	}
}
