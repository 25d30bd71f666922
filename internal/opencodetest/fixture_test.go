package opencodetest

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the fixtures in testdata from this run")

// checkFixture compares payload, normalized, with testdata/name; with
// -update it writes it there instead.
func checkFixture(t *testing.T, r *Output, name string, payload []byte) {
	t.Helper()
	got, err := r.Normalize(payload)
	if err != nil {
		t.Fatalf("normalize %s: %v\n%s", name, err, payload)
	}
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update writes it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what OpenCode %s gave its plugin:\ngot:\n%s\nwant:\n%s", path, Version, got, want)
	}
}
