package tools

import (
	"encoding/json"
	"testing"

	"github.com/hitl-sh/hitl"
)

func TestClaudeKind(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tool, input, kind, want string
	}{
		{"Bash", `{"command":"git status","description":"x"}`, hitl.KindShell, `{"command":"git status","cwd":"/p"}`},
		{"Write", `{"file_path":"/p/a.go","content":"package a"}`, hitl.KindFileWrite, `{"path":"/p/a.go","content":"package a"}`},
		{"Edit", `{"file_path":"/p/a.go","old_string":"a","new_string":"b"}`, hitl.KindFileEdit, `{"path":"/p/a.go","old":"a","new":"b"}`},
		{"MultiEdit", `{"file_path":"/p/a.go","edits":[]}`, hitl.KindFileEdit, `{"path":"/p/a.go"}`},
		{"Read", `{"file_path":"/etc/hosts"}`, hitl.KindFileRead, `{"path":"/etc/hosts"}`},
		{"WebFetch", `{"url":"https://example.com","prompt":"x"}`, hitl.KindWebFetch, `{"url":"https://example.com"}`},
		{"mcp__github__create_issue", `{"title":"t"}`, hitl.KindMCP, `{"server":"github","tool":"create_issue","args":{"title":"t"}}`},
		{"Bash", `{"command":["ls"]}`, "", ""},
		{"mcp__broken", `{}`, "", ""},
		{"Task", `{"prompt":"x"}`, "", ""},
	}
	for _, tt := range tests {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal([]byte(tt.input), &fields); err != nil {
			t.Fatal(err)
		}
		kind, input := claudeKind(tt.tool, fields, "/p")
		if kind != tt.kind || string(input) != tt.want {
			t.Errorf("%s %s: got %q %s, want %q %s", tt.tool, tt.input, kind, input, tt.kind, tt.want)
		}
	}
}
