package agenttest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Mkdir makes dir and its parents, failing the test when it cannot.
func Mkdir(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// WriteFile writes b to path, making its directory first, failing the
// test when it cannot.
func WriteFile(t testing.TB, path string, b []byte) {
	t.Helper()
	Mkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// WriteJSONFile writes v, marshalled as indented JSON, to path.
func WriteJSONFile(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatalf("marshal %s: %v", path, err)
	}
	WriteFile(t, path, b)
}

// ShellQuote quotes s for a POSIX shell.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
