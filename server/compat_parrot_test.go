package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/turns"
)

// TestHITLRespondNotFound: the AI-Parrot HITL contract's respond route
// answers 404 for an interaction that is unknown, already answered,
// expired or cancelled, as the contract says; the error's code says
// which. The native route keeps 409 and 410.
func TestHITLRespondNotFound(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	answered := ts.create(t, map[string]any{"question": "Answered?"})
	ts.mustDo(t, "POST", "/api/v1/interactions/"+answered.ID+"/respond", map[string]any{"value": "yes"}, http.StatusOK, nil)
	cancelled := ts.create(t, map[string]any{"question": "Cancelled?"})
	ts.mustDo(t, "POST", "/api/v1/interactions/"+cancelled.ID+"/cancel", nil, http.StatusOK, nil)
	expired := ts.create(t, map[string]any{"question": "Expired?", "timeout": 0.05})
	if _, err := ts.Broker.Wait(t.Context(), expired.ID); err != nil {
		t.Fatalf("wait for the deadline: %v", err)
	}

	for _, tc := range []struct {
		name, id, code string
		native         int
	}{
		{"unknown", "no-such-id", hitl.ENOTFOUND, http.StatusNotFound},
		{"already answered", answered.ID, hitl.ECONFLICT, http.StatusConflict},
		{"cancelled", cancelled.ID, hitl.ECANCELLED, http.StatusGone},
		{"expired", expired.ID, hitl.EEXPIRED, http.StatusGone},
	} {
		for _, body := range []map[string]any{
			{"interaction_id": tc.id, "value": "no"},
			{"interaction_id": tc.id, "value": "no", "response_type": "free_text"},
		} {
			status, raw := ts.do(t, "POST", "/api/v1/agents/hitl/respond", body)
			var got struct {
				Error struct{ Code, Message string }
			}
			if err := json.Unmarshal(raw, &got); err != nil || status != http.StatusNotFound || got.Error.Code != tc.code || got.Error.Message == "" {
				t.Errorf("%s %v: %d %s, want 404 with code %s and a message", tc.name, body, status, raw, tc.code)
			}
		}
		status, raw := ts.do(t, "POST", "/api/v1/interactions/"+tc.id+"/respond", map[string]any{"value": "no"})
		if status != tc.native || !strings.Contains(string(raw), `"code":"`+tc.code+`"`) {
			t.Errorf("%s on the native route: %d %s, want %d %s", tc.name, status, raw, tc.native, tc.code)
		}
	}
}

// TestHITLRespondResponseType: response_type is an optional override; a
// compatible one is accepted (the value then means what it does for the
// interaction's type), any other refused with 422 and the reason.
func TestHITLRespondResponseType(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	schema := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}, "required": []string{"n"}}
	create := map[hitl.Type]map[string]any{
		hitl.TypeApproval:     {"interaction_type": "approval", "question": "OK?"},
		hitl.TypeSingleChoice: {"interaction_type": "single_choice", "question": "Pick", "options": []string{"Red", "Blue, dark"}},
		hitl.TypeMultiChoice:  {"interaction_type": "multi_choice", "question": "Pick", "options": []string{"Red", "Blue", "Blue, dark"}},
		hitl.TypeForm:         {"interaction_type": "form", "question": "Fill", "form_schema": schema},
		hitl.TypeFreeText:     {"interaction_type": "free_text", "question": "Say"},
	}
	for _, tc := range []struct {
		typ, as hitl.Type
		value   any
		status  int
		want    string // the recorded value, or a part of the error message
	}{
		{hitl.TypeApproval, hitl.TypeApproval, false, 200, "false"},
		{hitl.TypeApproval, hitl.TypeFreeText, "yes", 200, "true"},
		{hitl.TypeApproval, hitl.TypeFreeText, "Reject", 200, "false"},
		{hitl.TypeApproval, hitl.TypeSingleChoice, "approve", 200, "true"},
		{hitl.TypeApproval, hitl.TypeFreeText, true, 422, "response_type free_text sends a string; got a boolean"},
		{hitl.TypeApproval, hitl.TypeFreeText, "perhaps", 422, "approval value must be true or false"},
		{hitl.TypeApproval, hitl.TypeMultiChoice, []string{"approve"}, 422, "response_type multi_choice cannot answer a approval interaction"},
		{hitl.TypeApproval, hitl.TypeForm, map[string]any{}, 422, "cannot answer"},
		{hitl.TypeSingleChoice, hitl.TypeFreeText, "Red", 200, `"red"`},
		{hitl.TypeSingleChoice, hitl.TypeMultiChoice, []string{"blue_dark"}, 200, `"blue_dark"`},
		{hitl.TypeSingleChoice, hitl.TypeMultiChoice, []string{"red", "blue_dark"}, 422, "exactly one key"},
		{hitl.TypeSingleChoice, hitl.TypeApproval, true, 422, "cannot answer"},
		{hitl.TypeMultiChoice, hitl.TypeSingleChoice, "Blue, dark", 200, `["blue_dark"]`},
		{hitl.TypeMultiChoice, hitl.TypeSingleChoice, []string{"red"}, 422, "one option key (a string); got an array"},
		{hitl.TypeMultiChoice, hitl.TypeFreeText, "red, blue", 200, `["red","blue"]`},
		{hitl.TypeForm, hitl.TypeFreeText, `{"n": 3}`, 200, `{"n":3}`},
		{hitl.TypeForm, hitl.TypeFreeText, map[string]any{"n": 3}, 422, "sends a string; got an object"},
		{hitl.TypeForm, hitl.TypeSingleChoice, "3", 422, "cannot answer"},
		{hitl.TypeFreeText, hitl.TypeFreeText, "hello", 200, `"hello"`},
		{hitl.TypeFreeText, hitl.TypeSingleChoice, "hello", 422, "response_type single_choice cannot answer a free_text interaction"},
		{hitl.TypeFreeText, hitl.TypeApproval, true, 422, "cannot answer"},
		{hitl.TypeFreeText, "poll", "x", 400, "response_type must be one of"},
	} {
		var in hitl.Interaction
		ts.mustDo(t, "POST", "/api/v1/interactions", create[tc.typ], http.StatusCreated, &in)
		status, raw := ts.do(t, "POST", "/api/v1/agents/hitl/respond", map[string]any{"interaction_id": in.ID, "value": tc.value, "response_type": tc.as})
		if status != tc.status {
			t.Errorf("%s as %s %v: status %d %s, want %d", tc.typ, tc.as, tc.value, status, raw, tc.status)
			continue
		}
		if status != http.StatusOK {
			if !strings.Contains(string(raw), tc.want) {
				t.Errorf("%s as %s %v: %s, want the reason %q", tc.typ, tc.as, tc.value, raw, tc.want)
			}
			continue
		}
		var got hitl.Interaction
		ts.mustDo(t, "GET", "/api/v1/interactions/"+in.ID, nil, http.StatusOK, &got)
		if string(got.Result.Value) != tc.want {
			t.Errorf("%s as %s %v: recorded %s, want %s", tc.typ, tc.as, tc.value, got.Result.Value, tc.want)
		}
	}
}
