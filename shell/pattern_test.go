package shell_test

import (
	"testing"

	"github.com/hitl-sh/hitl/shell"
)

func mustPattern(t *testing.T, s string) shell.Pattern {
	t.Helper()
	p, err := shell.ParsePattern(s)
	if err != nil {
		t.Fatalf("ParsePattern(%q): %v", s, err)
	}
	return p
}

// TestMayRunGitPush is what a deny rule for "git push" must catch: every
// way a line may run git push is Yes or Maybe, never No, so that no
// broader allow rule approves it.
func TestMayRunGitPush(t *testing.T) {
	p := mustPattern(t, "git push")
	tests := []struct {
		line string
		want shell.Match
	}{
		{"git push", shell.Yes},
		{"git push --force origin main", shell.Yes},
		{"git push --force origin main; true", shell.Yes},
		{"true; git push", shell.Yes},
		{"git push && echo done", shell.Yes},
		{"make || git push", shell.Yes},
		{"echo $(git push)", shell.Yes},
		{"echo `git push`", shell.Yes},
		{"x=$(git push --force)", shell.Yes},
		{"cat <(git push)", shell.Yes},
		{"git  push", shell.Yes},
		{"git\tpush", shell.Yes},
		{"   git push", shell.Yes},
		{"git push\n", shell.Yes},
		{"echo hi\ngit push", shell.Yes},
		{"/usr/bin/git push", shell.Yes},
		{"./git push", shell.Yes},
		{"env git push", shell.Yes},
		{"env -i PATH=/bin git push", shell.Yes},
		{"GIT_DIR=x git push", shell.Yes},
		{"git -C . push", shell.Yes},
		{"git -c core.pager=cat push", shell.Yes},
		{"git --git-dir=/r/.git push", shell.Yes},
		{"git --no-pager push origin", shell.Yes},
		{"GIT push", shell.Yes},
		{"git PUSH", shell.Yes},
		{`g\it push`, shell.Yes},
		{`'git' "push"`, shell.Yes},
		{`gi''t pu""sh`, shell.Yes},
		{`\git push`, shell.Yes},
		{"command git push", shell.Yes},
		{"exec git push", shell.Yes},
		{"sudo -u root git push", shell.Yes},
		{"nohup git push &", shell.Yes},
		{"time git push", shell.Yes},
		{"timeout 10 git push", shell.Yes},
		{"nice -n 5 git push", shell.Yes},
		{"(git push)", shell.Yes},
		{"{ git push; }", shell.Yes},
		{"if true; then git push; fi", shell.Yes},
		{"for i in 1; do git push; done", shell.Yes},
		{"f() { git push; }; f", shell.Yes},
		{"! git push", shell.Yes},
		{"git push > /dev/null 2>&1", shell.Yes},
		{"bash -c 'git push'", shell.Yes},
		{"bash -lc \"git push --force\"", shell.Yes},
		{"sh -c 'cd x && git push'", shell.Yes},
		{"bash -o pipefail -c 'git push'", shell.Yes},
		{"eval git push", shell.Yes},
		{"eval 'git push'", shell.Yes},
		{"watch 'git push'", shell.Yes},
		{"busybox sh -c 'git push'", shell.Yes},
		{"cat <<EOF\n$(git push)\nEOF", shell.Yes},
		{"C:\\\\git.exe push", shell.Yes},

		// What only running it would tell: a person decides.
		{"$GIT push", shell.Maybe},
		{"git $SUB", shell.Maybe},
		{"git${IFS}push", shell.Maybe},
		{"$(which git) push", shell.Maybe},
		{"x=git; $x push", shell.Maybe},
		{"echo git push | sh", shell.Maybe},
		{"bash deploy.sh", shell.Maybe},
		{"bash -c \"$CMD\"", shell.Maybe},
		{"echo push | xargs git", shell.Maybe},
		{"find . -exec git push \\;", shell.Maybe},
		{"ssh host git push", shell.Maybe},
		{"alias g=git", shell.Maybe},
		{"python3 -c \"import os; os.system('git push')\"", shell.Maybe},
		{"g?t push", shell.Maybe},
		{"git push 'unterminated", shell.Maybe},
		{"git $'push'", shell.Maybe},

		// What does not run git push.
		{"git status", shell.No},
		{"git pull", shell.No},
		{"git log --grep push", shell.No},
		{"echo push", shell.No},
		{"gitk push", shell.No},
		{"ls", shell.No},
		{"cat .gitignore", shell.No},
		{"git stash push", shell.No},
	}
	for _, tt := range tests {
		if got := p.MayRun(tt.line); got != tt.want {
			t.Errorf("MayRun(%q) = %v, want %v", tt.line, got, tt.want)
		}
	}
	if len(tests) < 40 {
		t.Fatalf("only %d cases", len(tests))
	}
}

// TestMayRunOptions checks a deny pattern with options: they may come
// anywhere after the program, and short ones grouped in any way.
func TestMayRunOptions(t *testing.T) {
	tests := []struct {
		pattern, line string
		want          shell.Match
	}{
		{"rm -rf", "rm -rf /", shell.Yes},
		{"rm -rf", "rm -fr /", shell.Yes},
		{"rm -rf", "rm -r -f /", shell.Yes},
		{"rm -rf", "rm -Rf /", shell.Yes},
		{"rm -rf", "/bin/rm -v -rf build", shell.Yes},
		{"rm -rf", "rm -r build", shell.No},
		{"rm -rf", "rm $FLAGS build", shell.Maybe},
		{"git push --force", "git push origin main --force", shell.Yes},
		{"git push --force", "git push --force=true origin", shell.Yes},
		{"git push --force", "git push origin main", shell.No},
		{"git push --force", "git push origin main; git push -f", shell.No},
		{"rm", "xargs rm < list", shell.Yes},
		{"rm", "echo don't rm", shell.Maybe},
		{"terraform apply", "terraform -chdir=infra apply -auto-approve", shell.Yes},
		{"kubectl delete", "kubectl --context prod -n x delete pod y", shell.Yes},
	}
	for _, tt := range tests {
		if got := mustPattern(t, tt.pattern).MayRun(tt.line); got != tt.want {
			t.Errorf("%q MayRun(%q) = %v, want %v", tt.pattern, tt.line, got, tt.want)
		}
	}
}

func TestMayRunArgv(t *testing.T) {
	p := mustPattern(t, "git push")
	tests := []struct {
		argv []string
		want shell.Match
	}{
		{[]string{"git", "push"}, shell.Yes},
		{[]string{"bash", "-lc", "git push --force"}, shell.Yes},
		{[]string{"/bin/sh", "-c", "echo ok; git push"}, shell.Yes},
		{[]string{"git", "status"}, shell.No},
		{[]string{"bash", "-lc", "git status"}, shell.No},
	}
	for _, tt := range tests {
		if got := p.MayRunArgv(tt.argv); got != tt.want {
			t.Errorf("MayRunArgv(%q) = %v, want %v", tt.argv, got, tt.want)
		}
	}
}

// TestAllows is what an allow rule for "git status" may match: the plain
// command, with further plain arguments unless the rule is exact, and
// nothing that can do more.
func TestAllows(t *testing.T) {
	p := mustPattern(t, "git status")
	tests := []struct {
		line         string
		prefix, exac bool // Allows(line, false), Allows(line, true)
	}{
		{"git status", true, true},
		{"git  status", true, true},
		{"  git status  ", true, true},
		{"git 'status'", true, true},
		{`git "status"`, true, true},
		{"git status # look", true, true},
		{"git status -s", true, false},
		{"git status --short", true, false},
		{"git status --output=/etc/passwd", true, false},
		{"git status -c core.pager=x", true, false},
		{"git status; rm -rf ~", false, false},
		{"git status && curl x | sh", false, false},
		{"git status || true", false, false},
		{"git status | sh", false, false},
		{"git status &", false, false},
		{"git status $(rm -rf ~)", false, false},
		{"git status `rm -rf ~`", false, false},
		{"git status > /etc/passwd", false, false},
		{"git status < /dev/null", false, false},
		{"git status 2>&1", false, false},
		{"git status\nrm -rf ~", false, false},
		{"git status\r\nrm -rf ~", false, false},
		{"git status $HOME", false, false},
		{"git status ~", false, false},
		{"git status *", false, false},
		{"git status {a,b}", false, false},
		{"git status $'\\x41'", false, false},
		{"GIT_PAGER=sh git status", false, false},
		{"/usr/bin/git status", false, false},
		{"env git status", false, false},
		{"! git status", false, false},
		{"(git status)", false, false},
		{"git statuss", false, false},
		{"git", false, false},
		{"git stat", false, false},
		{"git ѕtatus", false, false}, // Cyrillic ѕ
		{"gіt status", false, false}, // Cyrillic і
		{"git\u00a0status", false, false},
		{"git status 'unterminated", false, false},
		{"git status\x00", false, false},
		{"GIT STATUS", false, false},
		{"git status <<EOF\nx\nEOF", false, false},
	}
	for _, tt := range tests {
		l, _ := shell.Parse(tt.line)
		if got := p.Allows(l, false); got != tt.prefix {
			t.Errorf("Allows(%q, further arguments) = %v, want %v", tt.line, got, tt.prefix)
		}
		if got := p.Allows(l, true); got != tt.exac {
			t.Errorf("Allows(%q, exact) = %v, want %v", tt.line, got, tt.exac)
		}
	}
	if len(tests) < 40 {
		t.Fatalf("only %d cases", len(tests))
	}
}

func TestParsePattern(t *testing.T) {
	for _, bad := range []string{"", "git status; rm", "git $X", "a | b", "X=1 git", "git *", "git > f", "git\nls"} {
		if _, err := shell.ParsePattern(bad); err == nil {
			t.Errorf("ParsePattern(%q) = nil error, want one", bad)
		}
	}
	p := mustPattern(t, `git log --format='%H %s'`)
	if got, want := p.Words(), []string{"git", "log", "--format=%H %s"}; len(got) != 3 || got[2] != want[2] {
		t.Errorf("Words() = %q, want %q", got, want)
	}
}

// TestMayRunLineIndex: a line read once answers every pattern as MayRun
// does, whether the pattern's program is named in it or not.
func TestMayRunLineIndex(t *testing.T) {
	lines := []string{
		"git push", "ls; git push", `"" push`, "$X push", "bash -c 'g''i''t push'", "echo hi", "sudo -u git ls",
		"bash script.sh", "find . -exec rm {} \\;", "xargs rm", "env -i rm -rf /", "eval 'rm -rf /'", "git 'unterminated",
	}
	patterns := []string{"git push", "rm -rf", "rm", "ls", "sudo", "bash", "find"}
	for _, line := range lines {
		l, err := shell.Parse(line)
		for _, ps := range patterns {
			p := mustPattern(t, ps)
			want := p.MayRun(line)
			if err != nil {
				continue
			}
			if got := p.MayRunLine(l); got != want {
				t.Errorf("%q MayRunLine(%q) = %v, MayRun %v", ps, line, got, want)
			}
		}
	}
}
