package server_test

import (
	"net/http"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/turns"
)

// TestReplicasRules: a rule made by an answer on one replica decides the
// next matching action asked on another at once, and neither replica's
// streams show that question, only its outcome; once revoked on the first,
// it decides nothing more on the second, which had it in memory.
func TestReplicasRules(t *testing.T) {
	turns.Parallel(t)
	rs := newReplicas(t, 2)
	a, b := rs[0], rs[1]
	marker := b.ask(t, nil)
	wsA, wsB := openStream(t, a, marker), openStream(t, b, marker)

	first := b.create(t, bashAction("go test ./..."))
	wsA.expect(t, "hitl:question", first.ID)
	wsB.expect(t, "hitl:question", first.ID)
	a.mustDo(t, "POST", "/api/v1/interactions/"+first.ID+"/respond", map[string]any{"value": map[string]any{
		"decision": "approve", "always": map[string]any{"match": map[string]any{"arg": "command", "prefix": "go test"}}}}, http.StatusOK, nil)
	wsA.expect(t, "hitl:resolved", first.ID)
	wsB.expect(t, "hitl:resolved", first.ID)

	second := b.create(t, bashAction("go test -race ./broker"))
	if second.Status != hitl.StatusAnswered || second.Result.Channel != hitl.ChannelRule || second.Result.RuleID == "" {
		t.Fatalf("on B, after a rule made on A: %s %+v", second.Status, second.Result)
	}
	for name, ws := range map[string]*stream{"A": wsA, "B": wsB} {
		if m := ws.expect(t, "hitl:resolved", second.ID); m["channel"] != "rule" {
			t.Errorf("%s: %v, want resolved via rule (and no hitl:question before it)", name, m)
		}
	}

	a.mustDo(t, "DELETE", "/api/v1/rules/"+second.Result.RuleID, nil, http.StatusOK, nil)
	third := b.create(t, bashAction("go test ./server"))
	if third.Status != hitl.StatusPending {
		t.Fatalf("on B, after the rule was revoked on A: %s %+v, want pending", third.Status, third.Result)
	}
}
