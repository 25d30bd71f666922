package server_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/hitl-sh/hitl/broker"
)

// TestSSEResumeAfterPurge resumes a stream from an event that has been
// purged since (a browser that slept through the retention): it gets, in
// order, what is left of the log after that point — the questions still
// pending — and then live events.
func TestSSEResumeAfterPurge(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	answered := ts.create(t, map[string]any{"question": "Old?", "timeout": 600})
	ts.mustDo(t, "POST", "/api/v1/interactions/"+answered.ID+"/respond", map[string]any{"value": "yes"}, http.StatusOK, nil)
	pending := ts.create(t, map[string]any{"question": "Still waiting?", "timeout": 600})
	cancelled := ts.create(t, map[string]any{"question": "Withdrawn?", "timeout": 600})
	ts.mustDo(t, "POST", "/api/v1/interactions/"+cancelled.ID+"/cancel", nil, http.StatusOK, nil)
	newest := ts.create(t, map[string]any{"question": "Newest?", "timeout": 600})

	total, err := broker.Purge(context.Background(), ts.Store, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	if total.Interactions() != 2 {
		t.Fatalf("purged %d interactions, want the answered and the cancelled one", total.Interactions())
	}

	// Event 1 (the first question's) is gone, and so is everything of
	// the two purged interactions.
	s := openSSE(t, ts, "1", "")
	defer s.Close()
	seq := s.expect(t, "hitl:question", pending.ID, 1)
	seq = s.expect(t, "hitl:question", newest.ID, seq)
	ts.mustDo(t, "POST", "/api/v1/interactions/"+pending.ID+"/respond", map[string]any{"value": "yes"}, http.StatusOK, nil)
	s.expect(t, "hitl:resolved", pending.ID, seq)

	// A resume point past everything purged but before what is left
	// works the same.
	s2 := openSSE(t, ts, strconv.FormatInt(seq-1, 10), "")
	defer s2.Close()
	s2.expect(t, "hitl:question", newest.ID, seq-1)
	s2.expect(t, "hitl:resolved", pending.ID, seq)
}
