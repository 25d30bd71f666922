package server_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl/internal/turns"
)

func TestWebSocketPagedReplay(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	// Created latest-deadline first, so deadline order is the reverse of
	// creation.
	var ids []string
	for i := range 5 {
		in := ts.create(t, map[string]any{"question": fmt.Sprintf("Q%d?", i), "timeout": 3600 - i*60, "source_agent": fmt.Sprintf("agent-%d", i%2)})
		ids = append(ids, in.ID)
	}
	c, _, err := websocket.Dial(testContext(t, streamTimeout), ts.wsURL()+"?replay=page&limit=2", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CloseNow() })
	// The two soonest deadlines, soonest first.
	readWSType(t, c, "hitl:question", ids[4])
	readWSType(t, c, "hitl:question", ids[3])
	done := readWSRaw(t, c)
	if done["type"] != "hitl:replay_done" || done["paged"] != true || done["resumed"] != false || done["sort"] != "deadline" {
		t.Fatalf("end of the paged replay: %v", done)
	}
	if d := cmp.Diff([]any{ids[4], ids[3]}, done["pending"]); d != "" {
		t.Errorf("pending (-want +got):\n%s", d)
	}
	counts, _ := done["counts"].(map[string]any)
	if counts["total"] != float64(5) || fmt.Sprint(counts["by_agent"]) != "map[agent-0:3 agent-1:2]" {
		t.Errorf("counts: %v", counts)
	}
	cursor, _ := done["next_cursor"].(string)
	if cursor == "" {
		t.Fatalf("next_cursor: %v, want the rest's cursor", done["next_cursor"])
	}
	// The rest comes from the list API with that cursor.
	var rest listPage
	ts.mustDo(t, "GET", "/api/v1/interactions?status=pending&sort=deadline&cursor="+cursor, nil, http.StatusOK, &rest)
	if d := cmp.Diff([]string{"Q2?", "Q1?", "Q0?"}, questionsOf(rest.Interactions)); d != "" {
		t.Errorf("the rest (-want +got):\n%s", d)
	}
	// Live events follow: a new question, and the end of one not on the
	// page.
	live := ts.create(t, map[string]any{"question": "Live?"})
	readWSType(t, c, "hitl:question", live.ID)
	ts.mustDo(t, "POST", "/api/v1/interactions/"+ids[0]+"/cancel", nil, http.StatusOK, nil)
	readWSType(t, c, "hitl:cancel", ids[0])
}

func TestWebSocketPagedReplayRefusals(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	for _, q := range []string{"replay=pages", "replay=page&limit=0", "replay=page&limit=501", "replay=page&sort=oldest", "replay=page&session_id=s1"} {
		_, resp, err := websocket.Dial(testContext(t, streamTimeout), ts.wsURL()+"?"+q, nil)
		if err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
			status := 0
			if resp != nil {
				status = resp.StatusCode
			}
			t.Errorf("?%s: status %d, error %v; want 400", q, status, err)
		}
	}
}
