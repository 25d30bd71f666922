package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/server"
)

// TestEscalationOverHTTP: a question for alice reminds her after a
// second and adds the ops group after two. Her stream tells her of both;
// bob (in ops) sees nothing of it until it is escalated, then the
// question and the step; the timeline lists both steps.
func TestEscalationOverHTTP(t *testing.T) {
	ts := newAuthServer(t, server.AuthOptions{})
	aliceStream, _ := ts.openSSE(t, ts.alice, "")
	bobStream, _ := ts.openSSE(t, ts.bob, "")
	var in hitl.Interaction
	ts.mustCall(t, ts.agent, "POST", "/api/v1/interactions", map[string]any{
		"interaction_type": "approval", "question": "Roll back the release?", "timeout": 600,
		"targets": map[string]any{"users": []string{"alice"}},
		"escalation": []map[string]any{
			{"after": "1s", "remind": true},
			{"after": "2s", "add_targets": map[string]any{"groups": []string{"ops"}}, "channels": []string{"web"}},
		},
	}, http.StatusCreated, &in)
	if len(in.Escalation) != 2 || in.Escalation[1].AddTargets.Groups[0] != "ops" {
		t.Fatalf("created: escalation %+v, want the two steps", in.Escalation)
	}
	if resp, _ := ts.call(t, ts.bob, "GET", "/api/v1/interactions/"+in.ID, nil); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("bob reads it before the escalation: %d, want 404", resp.StatusCode)
	}

	if q, _ := aliceStream.nextType(t, "hitl:question"); q["interaction_id"] != in.ID {
		t.Fatalf("alice's stream: %v", q)
	}
	reminded, _ := aliceStream.nextType(t, "hitl:progress")
	if reminded["event"] != "reminded" || reminded["at"] == nil {
		t.Errorf("alice's reminder: %v", reminded)
	}
	aliceStream.nextType(t, "hitl:question") // sent again with the escalation; her inbox has it
	escalated, _ := aliceStream.nextType(t, "hitl:progress")
	if escalated["event"] != "escalated" || !strings.Contains(toJSON(t, escalated["escalation"]), `"groups":["ops"]`) {
		t.Errorf("alice's escalation: %v", escalated)
	}

	// bob's first message is the question, when ops is added.
	if q, _ := bobStream.nextType(t, "hitl:question"); q["interaction_id"] != in.ID {
		t.Fatalf("bob's stream: %v, want the escalated question", q)
	}
	if p, _ := bobStream.nextType(t, "hitl:progress"); p["event"] != "escalated" {
		t.Errorf("bob's stream after the question: %v", p)
	}
	var got hitl.Interaction
	ts.mustCall(t, ts.bob, "GET", "/api/v1/interactions/"+in.ID, nil, http.StatusOK, &got)
	if got.Targets == nil || len(got.Targets.Groups) != 1 || len(got.EscalatedSteps) != 2 {
		t.Errorf("bob reads it: targets %+v, fired %v", got.Targets, got.EscalatedSteps)
	}
	var timeline struct {
		Events []hitl.Event `json:"events"`
	}
	ts.mustCall(t, ts.bob, "GET", "/api/v1/interactions/"+in.ID+"/events", nil, http.StatusOK, &timeline)
	var types []string
	for _, ev := range timeline.Events {
		types = append(types, string(ev.Type))
	}
	if s := strings.Join(types, ","); !strings.Contains(s, "reminded") || !strings.Contains(s, "escalated") {
		t.Errorf("timeline: %s, want reminded and escalated", s)
	}
	ts.mustCall(t, ts.bob, "POST", "/api/v1/interactions/"+in.ID+"/respond", map[string]any{"value": "approve"}, http.StatusOK, nil)
}

// TestEscalationRefused: a request's escalation is checked, with a 400
// that says which step and why.
func TestEscalationRefused(t *testing.T) {
	ts := newAuthServer(t, server.AuthOptions{})
	for _, tt := range []struct {
		steps []map[string]any
		want  string
	}{
		{[]map[string]any{{"after": "2h", "remind": true}}, "escalation[0]: after (2h0m0s) must be before the deadline"},
		{[]map[string]any{{"after": "10m", "remind": true}, {"after": "5m", "remind": true}}, "escalation[1]: after (5m0s) must be later"},
		{[]map[string]any{{"after": "10m"}}, "must remind or add_targets"},
		{[]map[string]any{{"after": "soon", "remind": true}}, "must be a duration"},
		{[]map[string]any{{"after": "10m", "remind": true, "only_between": "09:00-18:00", "tz": "Europe/Nowhere"}}, "IANA time zone"},
	} {
		resp, body := ts.call(t, ts.agent, "POST", "/api/v1/interactions", map[string]any{"question": "Go?", "timeout": 3600, "escalation": tt.steps})
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), tt.want) {
			t.Errorf("%v: %d %s, want 400 with %q", tt.steps, resp.StatusCode, body, tt.want)
		}
	}
}

// toJSON encodes v, for matching.
func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
