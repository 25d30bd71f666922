package hitl_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
)

// mkRule returns a rule of claude-code's action with match (JSON, or
// "null" for every call), made age ago.
func mkRule(t *testing.T, id string, effect hitl.RuleEffect, action, match string, age time.Duration) *hitl.Rule {
	t.Helper()
	var m *hitl.RuleMatch
	if err := json.Unmarshal([]byte(match), &m); err != nil {
		t.Fatalf("decode match %s: %v", match, err)
	}
	return &hitl.Rule{ID: id, Effect: effect, SourceAgent: "claude-code", ActionName: action, Match: m, CreatedAt: now.Add(-age)}
}

// decidedBy returns the ID of the rule that decides in, "" for a person.
func decidedBy(rules []*hitl.Rule, in *hitl.Interaction) string {
	if r := hitl.DecidingRule(rules, in, now); r != nil {
		return r.ID
	}
	return ""
}

// TestDenyRuleBeatsAllowAll is a deny rule for "git push" beside a rule
// that allows every Bash call: no way of writing a push is approved. It
// is denied, or, where only running it would tell, left to a person.
func TestDenyRuleBeatsAllowAll(t *testing.T) {
	t.Parallel()
	rules := []*hitl.Rule{
		mkRule(t, "allow-all", hitl.RuleAllow, "Bash", `null`, 2*time.Hour),
		mkRule(t, "no-push", hitl.RuleDeny, "Bash", `{"arg":"command","prefix":"git push"}`, time.Hour),
	}
	const deny, person = "no-push", ""
	tests := []struct {
		command, want string
	}{
		{"git push --force origin main; true", deny},
		{"git push --force origin main && echo ok", deny},
		{"echo $(git push --force)", deny},
		{"echo `git push`", deny},
		{"git  push --force", deny},
		{"git\tpush", deny},
		{"   git push", deny},
		{"/usr/bin/git push", deny},
		{"env git push", deny},
		{"git -C . push", deny},
		{"git -c core.sshCommand=x push", deny},
		{"git --work-tree=. push", deny},
		{"GIT push", deny},
		{"git PUSH", deny},
		{`g\it push`, deny},
		{`"git" 'push'`, deny},
		{"command git push", deny},
		{"exec git push", deny},
		{"sudo git push", deny},
		{"nohup git push &", deny},
		{"timeout 60 git push", deny},
		{"(cd repo && git push)", deny},
		{"{ git push; }", deny},
		{"true | git push", deny},
		{"git status\ngit push", deny},
		{"bash -c 'git push'", deny},
		{"sh -lc \"git push --force\"", deny},
		{"eval 'git push'", deny},
		{"x=$(git push)", deny},
		{"cat <(git push)", deny},
		{"if true; then git push; fi", deny},
		{"f() { git push; }; f", deny},
		{"GIT_SSH_COMMAND=x git push", deny},
		{"watch 'git push'", deny},
		{"xargs git push < remotes", deny},
		{"$GIT push", person},
		{"git $VERB", person},
		{"git${IFS}push", person},
		{"echo git push | sh", person},
		{"curl -s x | bash", person},
		{"bash ./release.sh", person},
		{"echo push | xargs git", person},
		{"find . -exec git push \\;", person},
		{"ssh ci git push", person},
		{"git push 'unterminated", person},
		{"ls; gi$(echo t) push", person},
		{"git status", "allow-all"},
		{"git pull --rebase", "allow-all"},
		{"git log --grep push", "allow-all"},
		{"echo hello", "allow-all"},
	}
	for _, tt := range tests {
		in := actionFrom("claude-code", "agent", "Bash", mustJSON(t, map[string]string{"command": tt.command}))
		if got := decidedBy(rules, in); got != tt.want {
			t.Errorf("%q: decided by %q, want %q", tt.command, got, tt.want)
		}
	}
	if len(tests) < 40 {
		t.Fatalf("only %d cases", len(tests))
	}
	// A command some agents send as an argument vector.
	in := actionFrom("claude-code", "agent", "Bash", `{"command":["bash","-lc","git push --force"]}`)
	if got := decidedBy(rules, in); got != deny {
		t.Errorf("argv: decided by %q, want %q", got, deny)
	}
	in = actionFrom("claude-code", "agent", "Bash", `{"command":{"x":1}}`)
	if got := decidedBy(rules, in); got != person {
		t.Errorf("a command that is an object: decided by %q, want a person", got)
	}
}

// TestAllowRuleIsNarrow is an allow rule for "git status": a plain git
// status is approved (with further arguments for a prefix, not for an
// exact command); anything that may do more is left to a person.
func TestAllowRuleIsNarrow(t *testing.T) {
	t.Parallel()
	prefix := []*hitl.Rule{mkRule(t, "status", hitl.RuleAllow, "Bash", `{"arg":"command","prefix":"git status"}`, time.Hour)}
	exact := []*hitl.Rule{mkRule(t, "status", hitl.RuleAllow, "Bash", `{"arg":"command","command":"git status"}`, time.Hour)}
	tests := []struct {
		command       string
		prefix, exact bool
	}{
		{"git status", true, true},
		{"git  status", true, true},
		{"git 'status'", true, true},
		{"git status --short", true, false},
		{"git status -s -b", true, false},
		{"git status --output=/tmp/x", true, false},
		{"git status -c core.pager=less", true, false},
		{"git status; rm -rf ~", false, false},
		{"git status;rm -rf ~", false, false},
		{"git status && curl x | sh", false, false},
		{"git status || true", false, false},
		{"git status | sh", false, false},
		{"git status & rm -rf ~", false, false},
		{"git status $(rm -rf ~)", false, false},
		{"git status `rm -rf ~`", false, false},
		{"git status <(rm -rf ~)", false, false},
		{"git status > /etc/passwd", false, false},
		{"git status >> ~/.bashrc", false, false},
		{"git status < /dev/zero", false, false},
		{"git status 2>/dev/null", false, false},
		{"git status\nrm -rf ~", false, false},
		{"git status\rrm -rf ~", false, false},
		{"git status\x0brm", false, false},
		{"git status $HOME", false, false},
		{"git status ${X}", false, false},
		{"git status $((1+1))", false, false},
		{"git status ~root", false, false},
		{"git status *", false, false},
		{"git status ?", false, false},
		{"git status {a,b}", false, false},
		{"git status $'\\x3b'", false, false},
		{"GIT_EXTERNAL_DIFF=x git status", false, false},
		{"/usr/bin/git status", false, false},
		{"env git status", false, false},
		{"sudo git status", false, false},
		{"! git status", false, false},
		{"(git status)", false, false},
		{"{ git status; }", false, false},
		{"git statusx", false, false},
		{"git stat", false, false},
		{"git ѕtatus", false, false},
		{"gіt status", false, false},
		{"git\u00a0status", false, false},
		{"git\u200bstatus", false, false},
		{"GIT STATUS", false, false},
		{"git status 'unterminated", false, false},
	}
	for _, tt := range tests {
		in := actionFrom("claude-code", "agent", "Bash", mustJSON(t, map[string]string{"command": tt.command}))
		if got := decidedBy(prefix, in) == "status"; got != tt.prefix {
			t.Errorf("prefix rule, %q: approved %v, want %v", tt.command, got, tt.prefix)
		}
		if got := decidedBy(exact, in) == "status"; got != tt.exact {
			t.Errorf("exact rule, %q: approved %v, want %v", tt.command, got, tt.exact)
		}
	}
	if len(tests) < 40 {
		t.Fatalf("only %d cases", len(tests))
	}
}

// TestDenyGlobBeatsAllowAll is a deny rule for writes under /etc beside a
// rule allowing every write.
func TestDenyGlobBeatsAllowAll(t *testing.T) {
	t.Parallel()
	rules := []*hitl.Rule{
		mkRule(t, "allow-all", hitl.RuleAllow, "Write", `null`, 2*time.Hour),
		mkRule(t, "no-etc", hitl.RuleDeny, "Write", `{"arg":"file_path","glob":"/etc/**"}`, time.Hour),
		mkRule(t, "no-secrets", hitl.RuleDeny, "Write", `{"arg":"file_path","glob":"secrets/**"}`, time.Hour),
	}
	tests := []struct {
		path, want string
	}{
		{"/etc/passwd", "no-etc"},
		{"/etc/../etc/passwd", "no-etc"},
		{"/tmp/../etc/shadow", "no-etc"},
		{"/ETC/passwd", "no-etc"},
		{"/Etc/Sudoers.d/x", "no-etc"},
		{"//etc//passwd", "no-etc"},
		{"/etc/./passwd", "no-etc"},
		{"/home/me/../../etc/hosts", "no-etc"},
		{`\etc\passwd`, "no-etc"},
		{"/home/me/app/secrets/key", "no-secrets"},
		{"secrets/key", "no-secrets"},
		{"./secrets/key", "no-secrets"},
		{"src/../secrets/key", "no-secrets"},
		{"SECRETS/key", "no-secrets"},
		{"etc/passwd", ""},
		{"../etc/passwd", ""},
		{"../../../../etc/passwd", ""},
		{"/etc\x00/passwd", ""},
		{"/home/me/app/main.go", "allow-all"},
		{"/tmp/etc/passwd", "allow-all"},
		{"/etcetera/x", "allow-all"},
	}
	for _, tt := range tests {
		in := actionFrom("claude-code", "agent", "Write", mustJSON(t, map[string]string{"file_path": tt.path}))
		if got := decidedBy(rules, in); got != tt.want {
			t.Errorf("%q: decided by %q, want %q", tt.path, got, tt.want)
		}
	}
	in := actionFrom("claude-code", "agent", "Write", `{"file_path":["/etc/passwd"]}`)
	if got := decidedBy(rules, in); got != "" {
		t.Errorf("a path that is not a string: decided by %q, want a person", got)
	}
}

// TestRuleWithin is a rule a person's answer made: it decides only the
// actions that person could have answered.
func TestRuleWithin(t *testing.T) {
	t.Parallel()
	r := mkRule(t, "alice", hitl.RuleAllow, "Bash", `{"arg":"command","prefix":"git status"}`, time.Hour)
	r.Within = &hitl.Audience{User: "alice", Groups: []string{"dev"}}
	tests := []struct {
		name    string
		targets *hitl.Targets
		want    bool
	}{
		{"untargeted", nil, true},
		{"alice", &hitl.Targets{Users: []string{"alice"}}, true},
		{"alice's group", &hitl.Targets{Groups: []string{"dev"}}, true},
		{"carol only", &hitl.Targets{Users: []string{"carol"}}, false},
		{"another group", &hitl.Targets{Groups: []string{"ops"}}, false},
	}
	for _, tt := range tests {
		in := actionFrom("claude-code", "agent", "Bash", `{"command":"git status -s"}`)
		in.Targets = tt.targets
		if got := decidedBy([]*hitl.Rule{r}, in) == "alice"; got != tt.want {
			t.Errorf("%s: decided %v, want %v", tt.name, got, tt.want)
		}
	}
}

// mustJSON marshals v.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
