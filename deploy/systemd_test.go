// Package deploy holds the container image, the compose file and the
// systemd unit, and the tests that build, run and verify them.
package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSystemdUnit verifies hitl.service with systemd-analyze: no error or
// warning, the hardening the unit promises, and an exposure score that
// stays "OK".
func TestSystemdUnit(t *testing.T) {
	t.Parallel()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (apt-get install systemd): the unit is not verified")
	}
	unit, err := os.ReadFile("hitl.service")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"DynamicUser=yes", "StateDirectory=hitl", "ProtectSystem=strict", "NoNewPrivileges=yes",
		"ProtectHome=yes", "PrivateTmp=yes", "CapabilityBoundingSet=\n", "SystemCallFilter=@system-service",
		"ExecStart=/usr/local/bin/hitl serve", "KillSignal=SIGTERM",
	} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("hitl.service has no %q", strings.TrimSpace(want))
		}
	}

	// verify checks that ExecStart's binary exists: point it at a real
	// one, changing nothing else.
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "hitl.service")
	copied := strings.ReplaceAll(string(unit), "ExecStart=/usr/local/bin/hitl ", "ExecStart="+bin+" ")
	if err := os.WriteFile(path, []byte(copied), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		// verify exits 0 on a value it could not parse, but says so.
		t.Errorf("systemd-analyze verify hitl.service: %v\n%s", err, out)
	}
	out, err = exec.Command(analyze, "security", "--offline=yes", "--threshold=20", path).CombinedOutput()
	if err != nil {
		t.Errorf("systemd-analyze security: exposure above 2.0 (%v):\n%s", err, out)
	}
}
