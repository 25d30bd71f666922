package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/turns"
)

// TestFieldLimits checks, over HTTP, that each field that could make an
// interaction large is refused past its limit, with a message naming the
// field and the limit: such requests, about a megabyte each, were
// stored, and a few hundred of them took a list of pending questions to
// well over a gigabyte of memory.
func TestFieldLimits(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	options := func(n int, label, desc string) []map[string]string {
		out := make([]map[string]string, n)
		for i := range out {
			out[i] = map[string]string{"key": fmt.Sprint("k", i), "label": label, "description": desc}
		}
		return out
	}
	big := strings.Repeat("x", 900_000)
	cases := []struct {
		body map[string]any
		want string
	}{
		{map[string]any{"question": "q", "metadata": map[string]any{"blob": big}}, "metadata is limited to 16384 bytes of JSON; got 900011"},
		{map[string]any{"question": "q", "source_agent": big}, "source_agent is limited to 200 bytes; got 900000"},
		{map[string]any{"question": "q", "session_id": big}, "session_id is limited to 200 bytes; got 900000"},
		{map[string]any{"question": "q", "idempotency_key": big}, "idempotency_key is limited to 200 bytes; got 900000"},
		{map[string]any{"question": "q", "context": big}, "context is limited to 65536 bytes; got 900000"},
		{map[string]any{"question": big}, "question is limited to 16384 bytes; got 900000"},
		{map[string]any{"question": "q", "targets": map[string]any{"users": []string{big}}}, "targets.users[0] is limited to 64 bytes; got 900000"},
		{map[string]any{"question": "q", "targets": map[string]any{"groups": []string{"ops", big}}}, "targets.groups[1] is limited to 64 bytes; got 900000"},
		{map[string]any{"question": "q", "interaction_type": "single_choice", "options": options(150, "L", "")}, "options: at most 100 options; got 150"},
		{map[string]any{"question": "q", "interaction_type": "single_choice", "options": options(1, big, "")}, "options[0].label is limited to 200 bytes; got 900000"},
		{map[string]any{"question": "q", "interaction_type": "multi_choice", "options": options(1, "L", big)}, "options[0].description is limited to 1024 bytes; got 900000"},
		{map[string]any{"question": "q", "interaction_type": "form", "form_schema": map[string]any{"type": "object", "description": big}}, "form_schema is limited to 65536 bytes; got 900034"},
	}
	for _, tc := range cases {
		status, raw := ts.do(t, "POST", "/api/v1/interactions", tc.body)
		var e apiError
		_ = json.Unmarshal(raw, &e)
		if status != http.StatusBadRequest || e.Error.Code != hitl.EINVALID || e.Error.Message != tc.want {
			t.Errorf("%.80s…: %d %.300s, want 400 %q", fmt.Sprint(tc.body), status, raw, tc.want)
		}
	}
	var list struct {
		Interactions []hitl.Interaction `json:"interactions"`
	}
	ts.mustDo(t, "GET", "/api/v1/interactions", nil, http.StatusOK, &list)
	if len(list.Interactions) != 0 {
		t.Errorf("%d interactions stored, want none", len(list.Interactions))
	}
}

// TestStoredFormSchemaOverTheBounds checks that an interaction stored
// before the bounds on form_schema existed, with a schema far past them,
// is listed and shown as any other, and that answering it is refused
// with the reason instead of compiling the schema (4,900 nested allOf
// took five minutes, at every answer and after every restart).
func TestStoredFormSchemaOverTheBounds(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	deep := `{"type":"object","properties":{"x":` + strings.Repeat(`{"allOf":[`, 4900) + `{}` + strings.Repeat(`]}`, 4900) + `}}`
	in, err := hitl.NewInteraction(hitl.CreateRequest{Type: hitl.TypeForm, Question: "Old form", FormSchema: json.RawMessage(`{"type":"object"}`)}, hitl.Caller{Name: "local", Channel: hitl.ChannelAPI}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	in.ID, in.FormSchema = "01900000-0000-7000-8000-000000000001", json.RawMessage(deep)
	if _, _, _, err := ts.Store.CreateInteraction(context.Background(), in); err != nil {
		t.Fatalf("store: %v", err)
	}
	ts.mustDo(t, "GET", "/api/v1/interactions/"+in.ID, nil, http.StatusOK, nil)
	ts.mustDo(t, "GET", "/api/human-feedback/pending", nil, http.StatusOK, nil)
	for _, path := range []string{"/api/v1/interactions/" + in.ID + "/respond", "/api/v1/agents/hitl/respond"} {
		status, raw := ts.do(t, "POST", path, map[string]any{"interaction_id": in.ID, "value": map[string]any{"x": 1}})
		if status != http.StatusBadRequest || !strings.Contains(string(raw), "form_schema is nested more than 32 levels deep") {
			t.Errorf("POST %s: %d %.300s, want 400 naming the bound", path, status, raw)
		}
	}
}
