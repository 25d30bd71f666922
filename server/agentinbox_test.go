package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/turns"
)

// inboxCase is one of testdata/agent-inbox.json's HumanInterrupt cases.
type inboxCase struct {
	Name      string          `json:"name"`
	Interrupt json.RawMessage `json:"interrupt"`
	Decisions []string        `json:"decisions"`
	Answer    json.RawMessage `json:"answer"`
	Response  json.RawMessage `json:"response"`
}

// inboxState is what the Agent Inbox routes return.
type inboxState struct {
	Status         string            `json:"status"`
	InteractionIDs []string          `json:"interaction_ids"`
	Responses      []json.RawMessage `json:"responses"`
	Reason         string            `json:"reason"`
}

// inboxCases reads the HumanInterrupt cases the clients' tests share.
func inboxCases(t *testing.T) []inboxCase {
	t.Helper()
	data, err := os.ReadFile("../testdata/agent-inbox.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		HumanInterrupt []inboxCase `json:"human_interrupt"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("decode testdata/agent-inbox.json: %v", err)
	}
	if len(doc.HumanInterrupt) < 5 {
		t.Fatalf("%d cases", len(doc.HumanInterrupt))
	}
	return doc.HumanInterrupt
}

// sameJSON reports whether a and b hold the same JSON value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("decode %s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

// TestAgentInboxCases asks each HumanInterrupt, checks the action it
// becomes, answers it as a person would, and checks the HumanResponse
// list the graph resumes with.
func TestAgentInboxCases(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	for _, tc := range inboxCases(t) {
		t.Run(tc.Name, func(t *testing.T) {
			var st inboxState
			ts.mustDo(t, "POST", "/api/v1/agent-inbox/interrupts?source_agent=graph&session_id=thread-1&timeout=600", []byte(tc.Interrupt), http.StatusCreated, &st)
			if st.Status != "pending" || len(st.InteractionIDs) != 1 || st.Responses != nil {
				t.Fatalf("created: %+v, want one pending interaction and no responses", st)
			}
			id := st.InteractionIDs[0]
			var in hitl.Interaction
			ts.mustDo(t, "GET", "/api/v1/interactions/"+id, nil, http.StatusOK, &in)
			var hi struct {
				ActionRequest struct {
					Action string
					Args   json.RawMessage
				} `json:"action_request"`
				Description string
			}
			if err := json.Unmarshal(tc.Interrupt, &hi); err != nil {
				t.Fatal(err)
			}
			decisions := make([]string, len(in.Decisions))
			for i, d := range in.Decisions {
				decisions[i] = string(d)
			}
			if in.Type != hitl.TypeAction || in.Action.Name != hi.ActionRequest.Action || !sameJSON(t, in.Action.Args, hi.ActionRequest.Args) ||
				in.Context != hi.Description || !reflect.DeepEqual(decisions, tc.Decisions) || in.SourceAgent != "graph" || in.SessionID != "thread-1" || in.Timeout != 600 {
				t.Errorf("asked %+v (action %+v), want %s as an action with decisions %v", in, in.Action, tc.Interrupt, tc.Decisions)
			}
			ts.mustDo(t, "POST", "/api/v1/interactions/"+id+"/respond", map[string]any{"value": tc.Answer}, http.StatusOK, nil)
			ts.mustDo(t, "GET", "/api/v1/agent-inbox/interrupts/"+id+"?wait=10", nil, http.StatusOK, &st)
			if st.Status != "answered" || len(st.Responses) != 1 || !sameJSON(t, st.Responses[0], tc.Response) {
				t.Errorf("answered %s: got %+v, want responses [%s]", tc.Answer, st, tc.Response)
			}
		})
	}
}

// TestAgentInboxList asks a list of interrupts in one blocking call while
// a person answers them, and asks it again with the same idempotency key
// to get the same answers.
func TestAgentInboxList(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	cases := inboxCases(t)[1:4] // three actions of different names
	person := hitl.WithCaller(t.Context(), hitl.Caller{Name: "alice", Channel: hitl.ChannelWeb})
	answers := map[string]json.RawMessage{}
	var list []json.RawMessage
	for _, tc := range cases {
		var hi struct {
			ActionRequest struct{ Action string } `json:"action_request"`
		}
		_ = json.Unmarshal(tc.Interrupt, &hi)
		answers[hi.ActionRequest.Action] = tc.Answer
		list = append(list, tc.Interrupt)
	}
	answered := make(chan error, len(cases))
	ts.Broker.Observe(func(ev *hitl.Event) {
		if ev.Type == hitl.EventCreated {
			go func() {
				_, err := ts.Broker.Respond(person, ev.Interaction.ID, answers[ev.Interaction.Action.Name])
				answered <- err
			}()
		}
	})
	body, _ := json.Marshal(list)
	path := "/api/v1/agent-inbox/interrupts?idempotency_key=thread-7%3Anode&source_agent=graph&wait=60"
	var st inboxState
	ts.mustDo(t, "POST", path, body, http.StatusCreated, &st)
	for range cases {
		if err := <-answered; err != nil {
			t.Fatalf("respond: %v", err)
		}
	}
	check := func(st inboxState) {
		t.Helper()
		if st.Status != "answered" || len(st.InteractionIDs) != len(cases) || len(st.Responses) != len(cases) {
			t.Fatalf("got %+v, want %d answered", st, len(cases))
		}
		for i, tc := range cases {
			if !sameJSON(t, st.Responses[i], tc.Response) {
				t.Errorf("responses[%d] = %s, want %s (in order)", i, st.Responses[i], tc.Response)
			}
		}
	}
	check(st)

	// The same list and key: the same interactions, answered (200, not 201).
	var again inboxState
	ts.mustDo(t, "POST", path, body, http.StatusOK, &again)
	check(again)
	if !reflect.DeepEqual(again.InteractionIDs, st.InteractionIDs) {
		t.Errorf("ids %v, then %v", st.InteractionIDs, again.InteractionIDs)
	}
	var in hitl.Interaction
	ts.mustDo(t, "GET", "/api/v1/interactions/"+st.InteractionIDs[1], nil, http.StatusOK, &in)
	if in.IdempotencyKey != "thread-7:node#1" {
		t.Errorf("idempotency_key %q, want the list's key and the index", in.IdempotencyKey)
	}
	// By id: all of them, or one.
	var byID inboxState
	ts.mustDo(t, "GET", "/api/v1/agent-inbox/interrupts/"+strings.Join(st.InteractionIDs, ","), nil, http.StatusOK, &byID)
	check(byID)
	ts.mustDo(t, "GET", "/api/v1/agent-inbox/interrupts/"+st.InteractionIDs[2], nil, http.StatusOK, &byID)
	if len(byID.Responses) != 1 || !sameJSON(t, byID.Responses[0], cases[2].Response) {
		t.Errorf("one by id: %+v", byID)
	}
	// Another interrupt under the same key is a conflict, not a new question.
	status, raw := ts.do(t, "POST", "/api/v1/agent-inbox/interrupts?idempotency_key=thread-7%3Anode&source_agent=graph", []byte("["+string(cases[1].Interrupt)+","+string(cases[0].Interrupt)+"]"))
	if code, _ := errorOf(t, raw); status != http.StatusConflict || code != "conflict" {
		t.Errorf("same key, other interrupts: %d %s, want 409", status, raw)
	}
}

// TestAgentInboxUnanswered: an interrupt nobody answers, or one withdrawn,
// has no responses, and says why.
func TestAgentInboxUnanswered(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	tc := inboxCases(t)[0]
	var st inboxState
	ts.mustDo(t, "POST", "/api/v1/agent-inbox/interrupts?timeout=0.05&wait=30", []byte(tc.Interrupt), http.StatusCreated, &st)
	if st.Status != "expired" || st.Responses != nil || st.Reason == "" {
		t.Errorf("expired: %+v, want status expired, a reason and no responses", st)
	}

	ts.mustDo(t, "POST", "/api/v1/agent-inbox/interrupts", []byte("["+string(tc.Interrupt)+","+string(tc.Interrupt)+"]"), http.StatusCreated, &st)
	ts.mustDo(t, "POST", "/api/v1/interactions/"+st.InteractionIDs[0]+"/respond", map[string]any{"value": "approve"}, http.StatusOK, nil)
	ts.mustDo(t, "POST", "/api/v1/interactions/"+st.InteractionIDs[1]+"/cancel", map[string]any{"reason": "the run was stopped"}, http.StatusOK, nil)
	ts.mustDo(t, "GET", "/api/v1/agent-inbox/interrupts/"+strings.Join(st.InteractionIDs, ",")+"?wait=1", nil, http.StatusOK, &st)
	if st.Status != "cancelled" || st.Reason != "the run was stopped" || st.Responses != nil {
		t.Errorf("one answered, one cancelled: %+v, want cancelled with its reason", st)
	}
}

// TestAgentInboxErrors: what the routes refuse, each with the field named.
func TestAgentInboxErrors(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	var text hitl.Interaction
	ts.mustDo(t, "POST", "/api/v1/interactions", map[string]any{"question": "Plain text?"}, http.StatusCreated, &text)
	ok := `{"action_request":{"action":"x","args":{}},"config":{"allow_accept":true}}`
	many := "[" + strings.Repeat(ok+",", 100) + ok + "]"
	cases := []struct {
		method, path, body string
		status             int
		code, message      string
	}{
		{"POST", "", "", 400, "invalid", "request body is empty"},
		{"POST", "", "3", 400, "invalid", "the body must be"},
		{"POST", "", "[]", 400, "invalid", "a list of 1 to 100"},
		{"POST", "", many, 400, "invalid", "a list of 1 to 100"},
		{"POST", "", `{"config":{"allow_accept":true}}`, 400, "invalid", "interrupt.action_request is required"},
		{"POST", "", `[` + ok + `,{"action_request":{"action":" "},"config":{"allow_accept":true}}]`, 400, "invalid", "interrupts[1].action_request.action is required"},
		{"POST", "", `{"action_request":{"action":"x"}}`, 400, "invalid", "interrupt.config is required"},
		{"POST", "", `{"action_request":{"action":"x"},"config":{"allow_accept":false}}`, 400, "invalid", "interrupt.config allows nothing"},
		{"POST", "", `{"action_request":{"action":"x","args":[1]},"config":{"allow_accept":true}}`, 400, "invalid", "interrupt.action_request.args must be a JSON object"},
		{"POST", "", `{"action_request":{"action":"x"},"config":{"allow_accept":"yes"}}`, 400, "invalid", "allow_accept must be"},
		{"POST", "?wait=-1", ok, 400, "invalid", "wait must be"},
		{"POST", "?timeout=soon", ok, 400, "invalid", "timeout must be"},
		{"POST", "?source_agent=*", ok, 400, "invalid", "reserved"},
		{"GET", "/nope", "", 404, "not_found", ""},
		{"GET", "/" + text.ID, "", 400, "invalid", "free_text question, not an action"},
		{"GET", "/" + text.ID + "?wait=x", "", 400, "invalid", "wait must be"},
		{"DELETE", "/" + text.ID, "", 405, "method_not_allowed", ""},
		{"GET", "", "", 405, "method_not_allowed", ""},
	}
	for _, tc := range cases {
		var body any
		if tc.body != "" {
			body = []byte(tc.body)
		}
		status, raw := ts.do(t, tc.method, "/api/v1/agent-inbox/interrupts"+tc.path, body)
		code, message := errorOf(t, raw)
		if status != tc.status || code != tc.code || !strings.Contains(message, tc.message) {
			t.Errorf("%s %s %.60s: %d %s, want %d %s containing %q", tc.method, tc.path, tc.body, status, raw, tc.status, tc.code, tc.message)
		}
	}
	var page struct{ Interactions []hitl.Interaction }
	ts.mustDo(t, "GET", "/api/v1/interactions", nil, http.StatusOK, &page)
	if len(page.Interactions) != 1 {
		t.Errorf("%d interactions after refused requests, want only the plain one", len(page.Interactions))
	}
}
