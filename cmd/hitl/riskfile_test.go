package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/turns"
)

// TestServeRiskPatternsFile: hitl serve refuses to start on a risk
// patterns file with a bad line, naming the line, or one it cannot read;
// a good file's patterns (from the flag or HITL_RISK_PATTERNS_FILE) mark
// actions risky with their reasons.
func TestServeRiskPatternsFile(t *testing.T) {
	turns.Parallel(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "hitl.db")
	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(bad, []byte("# ours\npulumi up => changes cloud infrastructure\nvault (write => writes a secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := hitlRunWith(t, "", nil, "serve", "--addr", freeAddr(t), "--db", db, "--risk-patterns-file", bad)
	if code != 2 || !strings.Contains(stderr, "--risk-patterns-file: "+bad+": line 3: ") {
		t.Errorf("a bad line: exit %d, want 2 naming the file and line 3:\n%s", code, stderr)
	}
	_, stderr, code = hitlRunWith(t, "", []string{"HITL_RISK_PATTERNS_FILE=" + filepath.Join(dir, "missing.txt")}, "serve", "--addr", freeAddr(t), "--db", db)
	if code != 2 || !strings.Contains(stderr, "missing.txt") {
		t.Errorf("a missing file: exit %d, want 2 naming it:\n%s", code, stderr)
	}

	good := filepath.Join(dir, "risks.txt")
	if err := os.WriteFile(good, []byte("# ours\n\npulumi (up|destroy) => changes cloud infrastructure\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServerAt(t, freeAddr(t), db, "--risk-patterns-file", good)
	in, _, err := s.client(t).Create(context.Background(), hitl.CreateRequest{Type: hitl.TypeAction, SourceAgent: "claude-code", Timeout: 60,
		Action: &hitl.Action{Name: "Bash", Args: json.RawMessage(`{"command":"pulumi up --yes"}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Action.Risks) != 1 || in.Action.Risks[0].Why != "changes cloud infrastructure" {
		t.Errorf("risks of pulumi up: %+v; want the file's reason", in.Action.Risks)
	}
}
