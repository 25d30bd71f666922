package hitl

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestActionSummary(t *testing.T) {
	long := strings.Repeat("x", 150)
	tests := []struct {
		name string
		a    Action
		want string
	}{
		{"shell", Action{Name: "Bash", Kind: KindShell, Input: ShellInput("kubectl -n prod rollout restart deploy/api", "")}, "kubectl -n prod rollout restart deploy/api"},
		{"shell first line", Action{Name: "Bash", Kind: KindShell, Input: ShellInput("  set -e\nmake deploy\n", "")}, "set -e …"},
		{"shell long", Action{Name: "Bash", Kind: KindShell, Input: ShellInput("echo "+long, "")}, "echo " + strings.Repeat("x", MaxSummaryLen-6) + "…"},
		{"write", Action{Name: "Write", Kind: KindFileWrite, Input: FileWriteInput("config/prod.yaml", "a: 1\nb: 2\nc: 3\nd: 4\ne: 5\nf: 6\n")}, "Write config/prod.yaml (6 lines)"},
		{"write one line", Action{Name: "Write", Kind: KindFileWrite, Input: FileWriteInput("x.txt", "hi")}, "Write x.txt (1 line)"},
		{"edit", Action{Name: "Edit", Kind: KindFileEdit, Input: FileEditInput("invoice.go", "a\nold\nz", "a\nn1\nn2\nn3\nn4\nz")}, "Edit invoice.go (+4 −1)"},
		{"edit diff", Action{Name: "apply_patch", Kind: KindFileEdit, Input: FileDiffInput("main.go", "--- a/main.go\n+++ b/main.go\n@@ -1 +1,2 @@\n-x\n+y\n+z\n")}, "Edit main.go (+2 −1)"},
		{"read", Action{Name: "Read", Kind: KindFileRead, Input: FileReadInput("/etc/passwd")}, "Read /etc/passwd"},
		{"fetch", Action{Name: "WebFetch", Kind: KindWebFetch, Input: WebFetchInput("https://example.com/a")}, "Fetch https://example.com/a"},
		{"mcp", Action{Name: "mcp__github__delete_repo", Kind: KindMCP, Input: MCPInput("github", "delete_repo", json.RawMessage(`{"force":"","repo":"acme/site","n":2}`))}, "github · delete_repo: acme/site"},
		{"mcp no args", Action{Name: "mcp__x__ping", Kind: KindMCP, Input: MCPInput("x", "ping", nil)}, "x · ping"},
		{"name and command", Action{Name: "Bash", Args: json.RawMessage(`{"command":"git status"}`)}, "git status"},
		{"name and argument", Action{Name: "deploy", Args: json.RawMessage(`{"dry":"","env":"prod\nnow"}`)}, "deploy: prod now"},
		{"name only", Action{Name: "ping", Args: json.RawMessage(`{}`)}, "ping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.a.Summary(); got != tt.want {
				t.Errorf("Summary() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestHeadlineAndSubline(t *testing.T) {
	a := &Action{Name: "Bash", Kind: KindShell, Input: ShellInput("git status", "")}
	in := &Interaction{Type: TypeAction, Action: a, Question: a.DefaultQuestion()}
	if got, want := in.Headline(), "git status"; got != want {
		t.Errorf("Headline() without a question = %q, want %q", got, want)
	}
	if got := in.Subline(); got != "" {
		t.Errorf("Subline() without a question = %q, want none", got)
	}
	in.Question = "Check the tree?"
	if got, want := in.Headline(), "Check the tree?"; got != want {
		t.Errorf("Headline() with a question = %q, want %q", got, want)
	}
	if got, want := in.Subline(), "git status"; got != want {
		t.Errorf("Subline() with a question = %q, want %q", got, want)
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"summary":"git status"`) {
		t.Errorf("JSON %s lacks the summary", b)
	}
}

func TestProject(t *testing.T) {
	in := &Interaction{Metadata: map[string]any{"cwd": "/home/dev/shop"}}
	if got := in.Project(); got != "/home/dev/shop" {
		t.Errorf("Project() from cwd = %q", got)
	}
	in = &Interaction{Type: TypeAction, Action: &Action{Kind: KindShell, Input: ShellInput("ls", "/srv/infra")}}
	if got := in.Project(); got != "/srv/infra" {
		t.Errorf("Project() from a shell's cwd = %q", got)
	}
	if got := (&Interaction{}).Project(); got != "" {
		t.Errorf("Project() of nothing = %q", got)
	}
}
