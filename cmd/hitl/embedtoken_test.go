package main

import (
	"encoding/json"
	"github.com/hitl-sh/hitl/internal/turns"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEmbedTokenCommands: hitl embed-token create mints a token for a
// user and sessions (printed once), which a running server takes for that
// person's prompt; ls lists it without its secret; revoke ends it.
func TestEmbedTokenCommands(t *testing.T) {
	turns.Parallel(t)
	db := filepath.Join(t.TempDir(), "hitl.db")
	mustRun(t, 0, "alice-password\n", "user", "add", "alice", "--password-stdin", "--db", db)
	if _, stderr, code := hitlRunWith(t, "", nil, "embed-token", "create", "--user", "alice", "--db", db); code != 2 || !strings.Contains(stderr, "session") {
		t.Errorf("no --session: exit %d, %s; want 2", code, stderr)
	}
	if _, stderr, code := hitlRunWith(t, "", nil, "embed-token", "create", "--user", "alice", "--session", "s1", "--ttl", "48h", "--db", db); code != 2 || !strings.Contains(stderr, "--ttl") {
		t.Errorf("--ttl 48h: exit %d, %s; want 2", code, stderr)
	}
	if _, stderr, code := hitlRunWith(t, "", nil, "embed-token", "create", "--user", "nobody", "--session", "s1", "--db", db); code != 1 || !strings.Contains(stderr, "nobody") {
		t.Errorf("for no user: exit %d, %s; want 1", code, stderr)
	}
	token := strings.TrimSpace(mustRun(t, 0, "", "embed-token", "create", "--user", "alice", "--session", "s1", "--session", "s2", "--ttl", "10m", "--db", db))
	if !regexp.MustCompile(`^hitl_embed_[0-9A-Za-z]{40}$`).MatchString(token) {
		t.Fatalf("minted %q", token)
	}
	var list []struct {
		ID         string   `json:"id"`
		User       string   `json:"user"`
		SessionIDs []string `json:"session_ids"`
	}
	out := mustRun(t, 0, "", "embed-token", "ls", "--json", "--db", db)
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 1 || list[0].User != "alice" || len(list[0].SessionIDs) != 2 || strings.Contains(out, token) {
		t.Fatalf("ls: %s (%v)", out, err)
	}

	url := startPublic(t, db)
	status := func() int {
		req, _ := http.NewRequest(http.MethodGet, url+"/api/v1/interactions/nothing-here", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := status(); got != http.StatusNotFound {
		t.Errorf("with the token: %d, want 404 (known token, no such interaction)", got)
	}
	mustRun(t, 0, "", "embed-token", "revoke", list[0].ID, "--db", db)
	if got := status(); got != http.StatusUnauthorized {
		t.Errorf("after revoke: %d, want 401", got)
	}
}
