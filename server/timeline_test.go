package server_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/turns"
)

// eventPage is the body of GET /api/v1/interactions/{id}/events.
type eventPage struct {
	Events     []hitl.Event `json:"events"`
	NextCursor *string      `json:"next_cursor"`
}

// TestTimeline: an interaction's events, oldest first — who asked and
// how, who answered and how — paged by cursor; no answer value in them.
func TestTimeline(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	var in hitl.Interaction
	ts.mustDo(t, "POST", "/api/v1/interactions", map[string]any{"question": "Ship it?", "source_agent": "deployer"}, http.StatusCreated, &in)
	var other hitl.Interaction
	ts.mustDo(t, "POST", "/api/v1/interactions", map[string]any{"question": "Another"}, http.StatusCreated, &other)
	ts.mustDo(t, "POST", "/api/v1/interactions/"+in.ID+"/respond", map[string]any{"value": "the secret answer"}, http.StatusOK, nil)

	var page eventPage
	ts.mustDo(t, "GET", "/api/v1/interactions/"+in.ID+"/events", nil, http.StatusOK, &page)
	if len(page.Events) != 2 || page.NextCursor != nil {
		t.Fatalf("events: got %+v, next %v; want created and answered, no next page", page.Events, page.NextCursor)
	}
	created, answered := page.Events[0], page.Events[1]
	if created.Type != hitl.EventCreated || created.Actor != "local" || created.Channel != hitl.ChannelAPI || created.InteractionID != in.ID {
		t.Errorf("first event = %+v, want created by local via api", created)
	}
	if answered.Type != hitl.EventAnswered || answered.Actor != "local" || answered.Channel != hitl.ChannelAPI || answered.Seq <= created.Seq {
		t.Errorf("second event = %+v, want answered by local via api after the first", answered)
	}
	if answered.Detail != "" {
		t.Errorf("answered event detail = %q, want none (never the value)", answered.Detail)
	}

	// One at a time, by cursor.
	var first eventPage
	ts.mustDo(t, "GET", "/api/v1/interactions/"+in.ID+"/events?limit=1", nil, http.StatusOK, &first)
	if len(first.Events) != 1 || first.NextCursor == nil || first.Events[0].Seq != created.Seq {
		t.Fatalf("first page: got %+v, next %v", first.Events, first.NextCursor)
	}
	var second eventPage
	ts.mustDo(t, "GET", "/api/v1/interactions/"+in.ID+"/events?limit=1&cursor="+*first.NextCursor, nil, http.StatusOK, &second)
	if len(second.Events) != 1 || second.Events[0].Seq != answered.Seq {
		t.Fatalf("second page: got %+v", second.Events)
	}

	for _, tt := range []struct {
		path string
		want int
	}{
		{"/api/v1/interactions/no-such-id/events", http.StatusNotFound},
		{fmt.Sprintf("/api/v1/interactions/%s/events?cursor=x", in.ID), http.StatusBadRequest},
		{fmt.Sprintf("/api/v1/interactions/%s/events?cursor=-1", in.ID), http.StatusBadRequest},
		{fmt.Sprintf("/api/v1/interactions/%s/events?limit=0", in.ID), http.StatusBadRequest},
		{fmt.Sprintf("/api/v1/interactions/%s/events?limit=501", in.ID), http.StatusBadRequest},
	} {
		if got, body := ts.do(t, "GET", tt.path, nil); got != tt.want {
			t.Errorf("GET %s: status %d, want %d; body %s", tt.path, got, tt.want, body)
		}
	}
}
