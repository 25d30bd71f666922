package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/turns"
)

// TestWebSocketResume: a client that reconnects with ?after= the last seq
// it got is sent what it missed — the outcomes of the questions it shows,
// the questions asked meanwhile (and theirs) — in order, then
// hitl:replay_done (resumed), then live events, each once.
func TestWebSocketResume(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	answered := ts.create(t, map[string]any{"interaction_type": "approval", "question": "Answered while away?"})
	cancelled := ts.create(t, map[string]any{"question": "Cancelled while away?", "session_id": "s1"})
	kept := ts.create(t, map[string]any{"question": "Still pending?"})

	c := dialWSAt(t, ts, "/ws")
	readReplay(t, c)
	live := ts.create(t, map[string]any{"question": "Seen live?"})
	m := readWSType(t, c, "hitl:question", live.ID)
	seq := int64(m["seq"].(float64)) // the resume point
	c.CloseNow()

	// Away.
	ts.mustDo(t, "POST", "/api/v1/interactions/"+answered.ID+"/respond", map[string]any{"value": "yes"}, http.StatusOK, nil)
	ts.mustDo(t, "POST", "/api/v1/interactions/"+cancelled.ID+"/cancel", nil, http.StatusOK, nil)
	asked := ts.create(t, map[string]any{"question": "Asked while away?", "session_id": "s1"})
	brief := ts.create(t, map[string]any{"question": "Asked and answered while away?"})
	ts.mustDo(t, "POST", "/api/v1/interactions/"+brief.ID+"/respond", map[string]any{"value": "done"}, http.StatusOK, nil)
	last, err := ts.Store.LastEventSeq(t.Context())
	if err != nil {
		t.Fatal(err)
	}

	type msg struct{ typ, id, reason string }
	missed := []msg{
		{"hitl:resolved", answered.ID, ""}, {"hitl:cancel", answered.ID, "answered"},
		{"hitl:cancel", cancelled.ID, "agent_cancelled"},
		{"hitl:question", asked.ID, ""},
		{"hitl:question", brief.ID, ""}, {"hitl:resolved", brief.ID, ""}, {"hitl:cancel", brief.ID, "answered"},
	}
	resumed := dialWSAt(t, ts, fmt.Sprintf("/ws/userinfo?after=%d", seq))
	prev := seq
	for _, want := range missed {
		m := readWSRaw(t, resumed)
		if m["type"] != want.typ || m["interaction_id"] != want.id || (want.reason != "" && m["reason"] != want.reason) {
			t.Fatalf("resumed: got %v, want %s %s %s", m, want.typ, want.id, want.reason)
		}
		s, ok := m["seq"].(float64)
		if !ok || int64(s) < prev {
			t.Errorf("resumed %v: seq %v, want a number, in order after %d", m["type"], m["seq"], prev)
		}
		prev = int64(s)
	}
	done := readWSRaw(t, resumed)
	if want := map[string]any{"type": "hitl:replay_done", "seq": float64(last), "resumed": true}; !reflect.DeepEqual(done, want) {
		t.Errorf("end of the resume: got %v, want %v", done, want)
	}
	// Live, none twice: the next message is about the next event.
	next := ts.create(t, map[string]any{"question": "Live again?"})
	readWSType(t, resumed, "hitl:question", next.ID)

	// With a session filter, only that session's share of the same.
	filtered := dialWSAt(t, ts, fmt.Sprintf("/ws?after=%d&session_id=s1", seq))
	for _, want := range []msg{{"hitl:cancel", cancelled.ID, ""}, {"hitl:question", asked.ID, ""}, {"hitl:replay_done", "", ""}} {
		if m := readWSRaw(t, filtered); m["type"] != want.typ || (want.id != "" && m["interaction_id"] != want.id) {
			t.Fatalf("resumed for session s1: got %v, want %s %s", m, want.typ, want.id)
		}
	}

	// A point that is not from this event log (the database was replaced)
	// gets the full replay.
	fresh := dialWSAt(t, ts, fmt.Sprintf("/ws?after=%d", last+1000))
	ids, done := readReplay(t, fresh)
	if want := []string{kept.ID, live.ID, asked.ID, next.ID}; fmt.Sprint(ids) != fmt.Sprint(want) || done["resumed"] != false {
		t.Errorf("resume from another log: replay %v, %v; want the full replay %v", ids, done, want)
	}
}

// TestSSEResumeAfterAnswer: an answer is two events on SSE, and only the
// second carries the id, so a client that resumes from the id before
// them gets both again, and one that resumes from its id neither.
func TestSSEResumeAfterAnswer(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	in := ts.create(t, map[string]any{"interaction_type": "approval", "question": "Ship?"})
	before, err := ts.Store.LastEventSeq(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ts.mustDo(t, "POST", "/api/v1/interactions/"+in.ID+"/respond", map[string]any{"value": true}, http.StatusOK, nil)
	after, err := ts.Store.LastEventSeq(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	s := openSSE(t, ts, fmt.Sprint(before), "")
	for _, typ := range []string{"hitl:resolved", "hitl:cancel", "hitl:replay_done"} {
		ev, err := s.nextRaw(t)
		if err != nil {
			t.Fatal(err)
		}
		checkSSE(t, ev, typ)
	}
	s = openSSE(t, ts, fmt.Sprint(after), "")
	if ev, err := s.nextRaw(t); err != nil || ev.Event != "hitl:replay_done" {
		t.Errorf("resumed after the answer: got %+v, %v; want hitl:replay_done at once", ev, err)
	}
}

func TestWebSocketBadResumePoint(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	for _, q := range []string{"?after=x", "?after=-1", "?after=1.5"} {
		req, err := http.NewRequestWithContext(t.Context(), "GET", ts.URL+"/ws"+q, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "websocket")
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error struct{ Code, Message string }
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || err != nil || body.Error.Code != hitl.EINVALID || !strings.Contains(body.Error.Message, "after") {
			t.Errorf("%s: status %d, %+v (%v); want 400 invalid naming after", q, resp.StatusCode, body, err)
		}
	}
}
