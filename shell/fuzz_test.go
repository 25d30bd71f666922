package shell_test

import (
	"testing"

	"github.com/hitl-sh/hitl/shell"
)

// FuzzPattern: reading any line never panics, and a line an allow rule
// matches is one the deny rule of the same command matches too: the two
// readings never disagree the dangerous way.
func FuzzPattern(f *testing.F) {
	for _, seed := range [][2]string{
		{"git status", "git status -s"},
		{"git push", "git push; true"},
		{"rm -rf", "rm -fr /"},
		{"git status", "git status $(x)"},
		{"ls", "bash -c 'ls'"},
		{"echo", "echo 'a\nb'"},
		{"git", "GIT push"},
		{"x", "eval 'x'"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, line string) {
		p, err := shell.ParsePattern(pattern)
		if err != nil {
			return
		}
		m := p.MayRun(line)
		l, err := shell.Parse(line)
		if err != nil {
			if m != shell.Maybe {
				t.Fatalf("%q MayRun(%q) = %v for a line that does not parse, want maybe", pattern, line, m)
			}
			return
		}
		if got := p.MayRunLine(l); got != m {
			t.Fatalf("%q: MayRunLine(%q) = %v, MayRun %v", pattern, line, got, m)
		}
		if p.Allows(l, false) && m != shell.Yes {
			t.Fatalf("%q allows %q, but as a deny rule says %v", pattern, line, m)
		}
	})
}
