package server_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/internal/turns"
)

// TestStreamResumeAfterPurge: a client that resumes from before events a
// purge deleted (an inbox that slept through the retention) may have
// missed the end of a question it shows, so it gets the full replay
// (resumed false: any question it shows that is not pending has ended),
// on the WebSocket and over SSE alike; one that resumes from after them
// resumes as usual.
func TestStreamResumeAfterPurge(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	answered := ts.create(t, map[string]any{"question": "Answered long ago?", "timeout": 600})
	pending := ts.create(t, map[string]any{"question": "Still waiting?", "timeout": 600})
	ts.mustDo(t, "POST", "/api/v1/interactions/"+answered.ID+"/respond", map[string]any{"value": "yes"}, http.StatusOK, nil)
	cancelled := ts.create(t, map[string]any{"question": "Withdrawn long ago?", "timeout": 600})
	ts.mustDo(t, "POST", "/api/v1/interactions/"+cancelled.ID+"/cancel", nil, http.StatusOK, nil)
	newest := ts.create(t, map[string]any{"question": "Newest?", "timeout": 600})

	total, err := broker.Purge(context.Background(), ts.Store, time.Now().Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	if total.Interactions() != 2 {
		t.Fatalf("purged %d interactions, want the answered and the cancelled one", total.Interactions())
	}
	purged, err := ts.Store.PurgedThrough(t.Context())
	if err != nil || purged == 0 {
		t.Fatalf("PurgedThrough: %d, %v", purged, err)
	}
	wantPending := []string{pending.ID, newest.ID}

	// From event 2: the answer to the first question, which came after
	// it, has been purged since. The full replay.
	c := dialWSAt(t, ts, "/ws?after=2")
	ids, done := readReplay(t, c)
	if !slices.Equal(ids, wantPending) || done["resumed"] != false {
		t.Errorf("WebSocket from before the purge: %v, %v; want the full replay of %v", ids, done, wantPending)
	}
	s := openSSE(t, ts, "2", "")
	defer s.Close()
	sseIDs, sseDone, _ := s.replay(t)
	if !slices.Equal(sseIDs, wantPending) || sseDone["resumed"] != false {
		t.Errorf("SSE from before the purge: %v, %v; want the full replay of %v", sseIDs, sseDone, wantPending)
	}

	// From the newest event purged on: what was missed, then live.
	c2 := dialWSAt(t, ts, fmt.Sprintf("/ws?after=%d", purged))
	if m := readWSRaw(t, c2); m["type"] != "hitl:question" || m["interaction_id"] != newest.ID {
		t.Errorf("WebSocket from the newest event purged: %v, want the question asked after it", m)
	}
	if m := readWSRaw(t, c2); m["type"] != "hitl:replay_done" || m["resumed"] != true {
		t.Errorf("WebSocket from the newest event purged: %v, want a resumed hitl:replay_done", m)
	}
	s2 := openSSE(t, ts, strconv.FormatInt(purged, 10), "")
	defer s2.Close()
	s2.expect(t, "hitl:question", newest.ID, purged)
	if ev, err := s2.nextRaw(t); err != nil || ev.Event != "hitl:replay_done" {
		t.Errorf("SSE from the newest event purged: %+v, %v; want hitl:replay_done", ev, err)
	}
	ts.mustDo(t, "POST", "/api/v1/interactions/"+pending.ID+"/respond", map[string]any{"value": "yes"}, http.StatusOK, nil)
	readWSType(t, c2, "hitl:resolved", pending.ID)
	s2.expect(t, "hitl:resolved", pending.ID, purged)
}
