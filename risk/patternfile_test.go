package risk_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl/risk"
)

func TestReadPatterns(t *testing.T) {
	file := "# Our own risks\n\n  pulumi (up|destroy) => changes cloud infrastructure\n\t# indented comment\nvault\\s+write\n"
	ps, err := risk.ReadPatterns(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	a := risk.New(ps)
	if got, want := whys(a.Marks(bash("pulumi destroy --yes"))), "changes cloud infrastructure"; got != want {
		t.Errorf("Marks = %q, want %q", got, want)
	}
	if got, want := whys(a.Marks(bash("vault write secret/x v=1"))), `matches the risk pattern vault\s+write`; got != want {
		t.Errorf("Marks = %q, want %q", got, want)
	}
	if got := whys(a.Marks(bash("# Our own risks"))); got != "" {
		t.Errorf("a comment became a pattern: %q", got)
	}

	for _, c := range []struct{ file, want string }{
		{"ok => fine\n# fine\n\na(b => broken\n", "line 4: "},
		{" => no expression\n", "line 1: "},
	} {
		if _, err := risk.ReadPatterns(strings.NewReader(c.file)); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("ReadPatterns(%q) = %v; want an error starting %q", c.file, err, c.want)
		}
	}

	path := filepath.Join(t.TempDir(), "risks.txt")
	if err := os.WriteFile(path, []byte("terraform\\s+import => imports into production state\nbad(\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := risk.ReadPatternsFile(path); err == nil || !strings.Contains(err.Error(), path+": line 2: ") {
		t.Errorf("ReadPatternsFile: %v; want the file and line 2 named", err)
	}
	if _, err := risk.ReadPatternsFile(path + ".missing"); err == nil {
		t.Error("ReadPatternsFile of a missing file succeeded")
	}
}
