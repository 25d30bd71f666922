package server_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/server"
)

// pendingList is GET /api/human-feedback/pending.
type pendingList struct {
	Requests []struct {
		UniqueID       string `json:"unique_id"`
		InteractionID  string `json:"interaction_id"`
		MessageForUser string `json:"message_for_user"`
	} `json:"requests"`
}

// uniqueIDs returns each listed interaction's unique_id by interaction id.
func (p pendingList) uniqueIDs() map[string]string {
	out := make(map[string]string)
	for _, r := range p.Requests {
		out[r.InteractionID] = r.UniqueID
	}
	return out
}

// conflictError is a 409 that names the candidates.
type conflictError struct {
	Error struct {
		Code       string   `json:"code"`
		Message    string   `json:"message"`
		Candidates []string `json:"candidates"`
	} `json:"error"`
}

// TestFeedbackKeyOfTwoAgentsIsNeverGuessed checks that a unique_id naming
// pending questions of two agents (idempotency keys are unique per agent
// only) does not answer either: the submit is a conflict naming both,
// and the pending list gives each its interaction id as unique_id, which
// answers the right one.
func TestFeedbackKeyOfTwoAgentsIsNeverGuessed(t *testing.T) {
	turns.Parallel(t)
	ts := newAuthServer(t, server.AuthOptions{})
	ask := func(a actor, question, key string, targets *hitl.Targets) hitl.Interaction {
		t.Helper()
		body := map[string]any{"interaction_type": "approval", "question": question, "idempotency_key": key}
		if targets != nil {
			body["targets"] = targets
		}
		resp, raw := ts.call(t, a, "POST", "/api/v1/interactions", body)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("%s asks %q: %d %s", a.name, question, resp.StatusCode, raw)
		}
		var in hitl.Interaction
		mustUnmarshal(t, raw, &in)
		return in
	}
	pending := func(a actor) pendingList {
		t.Helper()
		resp, raw := ts.call(t, a, "GET", "/api/human-feedback/pending", nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("pending as %s: %d %s", a.name, resp.StatusCode, raw)
		}
		var p pendingList
		mustUnmarshal(t, raw, &p)
		return p
	}
	submit := func(a actor, uniqueID string) (int, conflictError) {
		t.Helper()
		resp, raw := ts.call(t, a, "POST", "/api/human-feedback/submit", map[string]any{"unique_id": uniqueID, "response": "approve"})
		var e conflictError
		if resp.StatusCode != http.StatusOK {
			mustUnmarshal(t, raw, &e)
		}
		return resp.StatusCode, e
	}
	refused := func(who actor, uniqueID string, want ...string) {
		t.Helper()
		status, e := submit(who, uniqueID)
		slices.Sort(e.Error.Candidates)
		slices.Sort(want)
		if status != http.StatusConflict || e.Error.Code != hitl.ECONFLICT || !slices.Equal(e.Error.Candidates, want) {
			t.Errorf("%s submits %q: %d %+v, want 409 with candidates %v", who.name, uniqueID, status, e.Error, want)
		}
	}

	deploy := ask(ts.agent, "Deploy to production?", "req-1", nil)
	drop := ask(ts.otherAgent, "Delete the database?", "req-1", nil)
	refused(ts.alice, "req-1", deploy.ID, drop.ID)
	if ts.status(t, deploy.ID) != hitl.StatusPending || ts.status(t, drop.ID) != hitl.StatusPending {
		t.Fatalf("a refused submit answered something")
	}
	got := pending(ts.alice).uniqueIDs()
	if got[deploy.ID] != deploy.ID || got[drop.ID] != drop.ID {
		t.Errorf("pending unique_ids %v, want each shared key replaced by the interaction id", got)
	}
	// Posting back what the list gave answers that question, and only it.
	if status, e := submit(ts.alice, got[deploy.ID]); status != http.StatusOK {
		t.Fatalf("submit the listed unique_id: %d %+v", status, e)
	}
	if ts.status(t, deploy.ID) != hitl.StatusAnswered || ts.status(t, drop.ID) != hitl.StatusPending {
		t.Errorf("after answering the deploy: deploy %s, drop %s; want answered, pending", ts.status(t, deploy.ID), ts.status(t, drop.ID))
	}
	// Only one pending question has the key now: the key answers it.
	if got := pending(ts.alice).uniqueIDs(); got[drop.ID] != "req-1" {
		t.Errorf("pending unique_id of the one left: %q, want req-1", got[drop.ID])
	}
	if resp, raw := ts.call(t, ts.admin, "POST", "/api/v1/interactions/"+drop.ID+"/cancel", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("cancel: %d %s", resp.StatusCode, raw)
	}

	// Who sees what decides: alice sees only the untargeted question with
	// the key, bob (targeted) sees both.
	forBob := ask(ts.agent, "Restart the primary?", "req-2", &hitl.Targets{Users: []string{"bob"}})
	forAll := ask(ts.otherAgent, "Rotate the logs?", "req-2", nil)
	if got := pending(ts.alice).uniqueIDs(); got[forAll.ID] != "req-2" || got[forBob.ID] != "" {
		t.Errorf("alice's pending unique_ids %v, want req-2 for %s only", got, forAll.ID)
	}
	got = pending(ts.bob).uniqueIDs()
	if got[forAll.ID] != forAll.ID || got[forBob.ID] != forBob.ID {
		t.Errorf("bob's pending unique_ids %v, want interaction ids", got)
	}
	refused(ts.bob, "req-2", forBob.ID, forAll.ID)
	if status, e := submit(ts.alice, "req-2"); status != http.StatusOK || ts.status(t, forAll.ID) != hitl.StatusAnswered || ts.status(t, forBob.ID) != hitl.StatusPending {
		t.Errorf("alice submits req-2: %d %+v; want the one she sees answered", status, e)
	}

	// An agent that takes another question's id as its key does not make
	// that id answer its own question.
	target := ask(ts.agent, "Ship the release?", "", nil)
	squat := ask(ts.otherAgent, "Wipe the backups?", target.ID, nil)
	refused(ts.admin, target.ID, target.ID, squat.ID)
	got = pending(ts.admin).uniqueIDs()
	if got[target.ID] != target.ID || got[squat.ID] != squat.ID {
		t.Errorf("pending unique_ids %v, want interaction ids for both", got)
	}
}

// TestFeedbackPendingListsEveryPage checks that the pending list, read and
// written a page at a time, lists every pending interaction once, newest
// first.
func TestFeedbackPendingListsEveryPage(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	var ids []string
	for i := range 123 {
		var in hitl.Interaction
		ts.mustDo(t, "POST", "/api/v1/interactions", map[string]any{"question": fmt.Sprintf("q%d", i), "idempotency_key": fmt.Sprintf("k%d", i)}, http.StatusCreated, &in)
		ids = append(ids, in.ID)
	}
	var p pendingList
	ts.mustDo(t, "GET", "/api/human-feedback/pending", nil, http.StatusOK, &p)
	if len(p.Requests) != len(ids) {
		t.Fatalf("%d listed, want %d", len(p.Requests), len(ids))
	}
	for i, r := range p.Requests {
		j := len(ids) - 1 - i
		if r.InteractionID != ids[j] || r.UniqueID != fmt.Sprintf("k%d", j) {
			t.Fatalf("entry %d: %s %q, want %s k%d", i, r.InteractionID, r.UniqueID, ids[j], j)
		}
	}
}
