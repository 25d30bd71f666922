package agenttest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Missing ends a test whose agent CLI is not installed: it skips the test
// with msg, or fails it when the environment variable requireEnv (such as
// HITL_TEST_REQUIRE_CODEX, which test.sh sets) is 1.
func Missing(t testing.TB, requireEnv, msg string) {
	t.Helper()
	if os.Getenv(requireEnv) == "1" {
		t.Fatalf("%s; %s=1, so this fails", msg, requireEnv)
	}
	t.Skip(msg)
}

// Installed returns the file at path under the testdata/node_modules
// directory beside the Go source file src (a harness package's own, from
// runtime.Caller), where test.sh installs its agent CLI, or "" when it is
// not there.
func Installed(src string, path ...string) string {
	p := filepath.Join(append([]string{filepath.Dir(src), "testdata", "node_modules"}, path...)...)
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// Require returns bin, an agent CLI's path, or, when it is "", ends the
// test as Missing does.
func Require(t testing.TB, bin, requireEnv, msg string) string {
	t.Helper()
	if bin == "" {
		Missing(t, requireEnv, msg)
	}
	return bin
}

// JSONLines decodes the JSON objects of b, one a line, skipping lines
// that are not one (such as a CLI's stray text).
func JSONLines(b []byte) []map[string]any {
	var events []map[string]any
	for _, line := range bytes.Split(b, []byte("\n")) {
		var ev map[string]any
		if json.Unmarshal(line, &ev) == nil {
			events = append(events, ev)
		}
	}
	return events
}
