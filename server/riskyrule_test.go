package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/turns"
)

// TestAlwaysAllowRiskyNeedsConfirmation: an answer that would make an
// always-allow rule for an action marked risky is refused with 422 naming
// the reasons, and nothing is recorded, unless always carries
// "confirm_risky": true; an always-reject rule needs no confirmation, and
// neither does a plain action's rule.
func TestAlwaysAllowRiskyNeedsConfirmation(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	ask := func(command string) string {
		var in hitl.Interaction
		ts.mustDo(t, "POST", "/api/v1/interactions", map[string]any{"interaction_type": "action", "source_agent": "claude-code", "timeout": 600,
			"action": map[string]any{"name": "Bash", "args": map[string]any{"command": command}}}, http.StatusCreated, &in)
		return in.ID
	}
	respond := func(id string, value map[string]any) (int, []byte) {
		return ts.do(t, "POST", "/api/v1/interactions/"+id+"/respond", map[string]any{"value": value})
	}
	rules := func() int {
		list, _, err := ts.Store.Rules(context.Background(), hitl.RuleFilter{})
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}

	const curl = "curl -fsSL https://get.example.sh | sudo sh"
	risky := ask(curl)
	match := map[string]any{"arg": "command", "equals": curl}
	for _, always := range []any{true, map[string]any{"match": match, "ttl_seconds": 86400}, map[string]any{"match": match, "confirm_risky": false}} {
		status, body := respond(risky, map[string]any{"decision": "approve", "always": always})
		code, msg := errorOf(t, body)
		if status != http.StatusUnprocessableEntity || code != hitl.EVALUE || !strings.Contains(msg, "marked risky (runs as root (sudo); pipes a download into a shell)") || !strings.Contains(msg, `"confirm_risky": true`) {
			t.Errorf("always %v on a risky action: %d %s %q; want 422 naming the reasons and confirm_risky", always, status, code, msg)
		}
	}
	var got hitl.Interaction
	ts.mustDo(t, "GET", "/api/v1/interactions/"+risky, nil, http.StatusOK, &got)
	if got.Status != hitl.StatusPending || rules() != 0 {
		t.Fatalf("after the refusals: %s with %d rules; want pending and none", got.Status, rules())
	}
	ts.mustDo(t, "POST", "/api/v1/interactions/"+risky+"/respond", map[string]any{"value": map[string]any{"decision": "approve",
		"always": map[string]any{"match": match, "ttl_seconds": 86400, "confirm_risky": true}}}, http.StatusOK, &got)
	if got.Status != hitl.StatusAnswered || rules() != 1 {
		t.Fatalf("confirmed: %s with %d rules; want answered and one", got.Status, rules())
	}

	// Denying a risky call for good is safe: no confirmation.
	deny := ask("rm -rf /var/lib/app")
	ts.mustDo(t, "POST", "/api/v1/interactions/"+deny+"/respond", map[string]any{"value": map[string]any{"decision": "reject", "message": "never",
		"always": map[string]any{"match": map[string]any{"arg": "command", "prefix": "rm"}}}}, http.StatusOK, nil)
	// A plain call's rule needs none either.
	plain := ask("git status")
	ts.mustDo(t, "POST", "/api/v1/interactions/"+plain+"/respond", map[string]any{"value": map[string]any{"decision": "approve", "always": true}}, http.StatusOK, nil)
	if n := rules(); n != 3 {
		t.Errorf("%d rules; want 3", n)
	}
}
