package server_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/server"
)

// TestConsensusOverEveryRoute: bob and carol (the ops group) must both
// approve. A vote through either contract's respond route gets what that
// route answers for an accepted answer while the interaction stays
// pending; the native API shows the votes so far and refuses a second
// vote; the second approval decides it, once, with both votes.
func TestConsensusOverEveryRoute(t *testing.T) {
	ts := newAuthServer(t, server.AuthOptions{})
	var in hitl.Interaction
	ts.mustCall(t, ts.agent, "POST", "/api/v1/interactions", map[string]any{
		"interaction_type": "approval", "question": "Deploy 1432 to production?", "idempotency_key": "deploy-1432",
		"targets": map[string]any{"groups": []string{"ops"}}, "consensus": map[string]any{"mode": "all", "veto": true},
	}, http.StatusCreated, &in)
	if in.Consensus == nil || in.Consensus.Mode != hitl.ModeAll || in.VotesNeeded != 2 {
		t.Fatalf("created: consensus %+v, votes needed %d; want all of 2", in.Consensus, in.VotesNeeded)
	}

	resp, body := ts.call(t, ts.bob, "POST", "/api/v1/agents/hitl/respond", map[string]any{"interaction_id": in.ID, "value": true})
	var accepted struct {
		OK            bool   `json:"ok"`
		InteractionID string `json:"interaction_id"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &accepted) != nil || !accepted.OK || accepted.InteractionID != in.ID {
		t.Fatalf("bob's vote through the AI-Parrot route: %d %s", resp.StatusCode, body)
	}
	var got hitl.Interaction
	ts.mustCall(t, ts.bob, "GET", "/api/v1/interactions/"+in.ID, nil, http.StatusOK, &got)
	if got.Status != hitl.StatusPending || len(got.Votes) != 1 || got.Votes[0].By != "bob" || string(got.Votes[0].Value) != "true" {
		t.Fatalf("after bob: %s, votes %+v", got.Status, got.Votes)
	}
	resp, body = ts.call(t, ts.bob, "POST", "/api/v1/interactions/"+in.ID+"/respond", map[string]any{"value": "reject"})
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("bob votes again: %d %s, want 409", resp.StatusCode, body)
	}
	resp, _ = ts.call(t, ts.alice, "POST", "/api/v1/interactions/"+in.ID+"/respond", map[string]any{"value": "approve"})
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("alice (not in ops) votes: %d, want 404: she cannot see it", resp.StatusCode)
	}

	// carol, an admin in ops, through the human_feedback route.
	resp, body = ts.call(t, ts.carolSession(t), "POST", "/api/human-feedback/submit", map[string]any{"unique_id": "deploy-1432", "response": "approve"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("carol's vote through the human_feedback route: %d %s", resp.StatusCode, body)
	}
	ts.mustCall(t, ts.agent, "GET", "/api/v1/interactions/"+in.ID, nil, http.StatusOK, &got)
	if got.Status != hitl.StatusAnswered || string(got.Result.Value) != "true" || len(got.Result.Votes) != 2 {
		t.Fatalf("decided: %s %+v", got.Status, got.Result)
	}
	raw, _ := json.Marshal(got.Result.Votes)
	t.Logf("votes: %s", raw)
}

// TestClaimRoutes: bob claims, carol is told bob is on it, bob releases.
func TestClaimRoutes(t *testing.T) {
	ts := newAuthServer(t, server.AuthOptions{})
	var in hitl.Interaction
	ts.mustCall(t, ts.agent, "POST", "/api/v1/interactions", map[string]any{
		"interaction_type": "approval", "question": "Restart the database?", "claim": "exclusive",
		"targets": map[string]any{"groups": []string{"ops"}},
	}, http.StatusCreated, &in)
	var got hitl.Interaction
	ts.mustCall(t, ts.bob, "POST", "/api/v1/interactions/"+in.ID+"/claim", map[string]any{"ttl_seconds": 600}, http.StatusOK, &got)
	if got.Claim == nil || got.Claim.By != "bob" || got.Claim.ExpiresAt.Sub(got.Claim.At).Seconds() != 600 {
		t.Fatalf("claimed: %+v", got.Claim)
	}
	carol := ts.carolSession(t)
	resp, body := ts.call(t, carol, "POST", "/api/v1/interactions/"+in.ID+"/respond", map[string]any{"value": "approve"})
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("carol answers bob's exclusive claim: %d %s, want 409", resp.StatusCode, body)
	}
	resp, _ = ts.call(t, ts.alice, "POST", "/api/v1/interactions/"+in.ID+"/claim", nil)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("alice (not in ops) claims: %d, want 404: she cannot see it", resp.StatusCode)
	}
	resp, _ = ts.call(t, ts.bob, "POST", "/api/v1/interactions/"+in.ID+"/claim", map[string]any{"ttl_seconds": -1})
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a negative ttl: %d, want 400", resp.StatusCode)
	}
	var released hitl.Interaction
	ts.mustCall(t, ts.bob, "DELETE", "/api/v1/interactions/"+in.ID+"/claim", nil, http.StatusOK, &released)
	if released.Claim != nil || released.Status != hitl.StatusPending {
		t.Errorf("released: %s, %+v", released.Status, released.Claim)
	}
	ts.mustCall(t, carol, "POST", "/api/v1/interactions/"+in.ID+"/respond", map[string]any{"value": "approve"}, http.StatusOK, &got)
}

// carolSession logs carol (an admin in ops) in.
func (ts *authServer) carolSession(t *testing.T) actor {
	t.Helper()
	return actor{name: "carol", cookie: ts.login(t, "carol", hitltest.CarolPassword)}
}

// mustCall calls and checks the status, decoding the body into out.
func (ts *authServer) mustCall(t *testing.T, a actor, method, path string, body any, want int, out any) {
	t.Helper()
	resp, raw := ts.call(t, a, method, path, body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s as %s: status %d, want %d; body %s", method, path, a.name, resp.StatusCode, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
		}
	}
}
