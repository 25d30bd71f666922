package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/turns"
)

// sseEvent is one Server-Sent Event as a client parses it.
type sseEvent struct {
	Event, Data, ID, Retry string
}

// sseStream reads an open /api/v1/events response.
type sseStream struct {
	events <-chan sseEvent // closed when the stream ends
	cancel context.CancelFunc
}

// errStreamEnded is what next returns once the server ended the stream.
var errStreamEnded = errors.New("stream ended")

// openSSE opens /api/v1/events with an optional Last-Event-ID header and
// query, checks the response headers and the retry hint, and parses the
// stream in the background until the test ends or Close.
func openSSE(t *testing.T, ts *testServer, lastEventID, query string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", ts.URL+"/api/v1/events"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatalf("GET /api/v1/events: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("GET /api/v1/events: status %d, want 200", resp.StatusCode)
	}
	for k, want := range map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-store", "X-Accel-Buffering": "no"} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	ch := make(chan sseEvent)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		parseSSE(ctx, bufio.NewScanner(resp.Body), ch)
	}()
	s := &sseStream{events: ch, cancel: cancel}
	if ev, err := s.next(t); err != nil || ev != (sseEvent{Retry: "2000"}) {
		t.Fatalf("first block %+v, %v; want retry: 2000", ev, err)
	}
	return s
}

// parseSSE sends each block of fields (comments dropped) on ch, as the
// EventSource algorithm reads them.
func parseSSE(ctx context.Context, sc *bufio.Scanner, ch chan<- sseEvent) {
	sc.Buffer(nil, 1<<20)
	var ev sseEvent
	seen := false
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if seen {
				select {
				case ch <- ev:
				case <-ctx.Done():
					return
				}
			}
			ev, seen = sseEvent{}, false
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		seen = true
		switch field {
		case "event":
			ev.Event = value
		case "data":
			if ev.Data != "" {
				ev.Data += "\n"
			}
			ev.Data += value
		case "id":
			ev.ID = value
		case "retry":
			ev.Retry = value
		}
	}
}

// next returns the next event a test acts on, or errStreamEnded:
// hitl:replay_done, and the hitl:cancel (reason answered) that follows
// every hitl:resolved, are read past; nextRaw returns them too.
func (s *sseStream) next(t *testing.T) (sseEvent, error) {
	t.Helper()
	for {
		ev, err := s.nextRaw(t)
		if err != nil || !sseMarker(ev) {
			return ev, err
		}
	}
}

// sseMarker reports whether ev is an event next reads past.
func sseMarker(ev sseEvent) bool {
	switch ev.Event {
	case "hitl:replay_done":
		return true
	case "hitl:cancel":
		var m map[string]any
		return json.Unmarshal([]byte(ev.Data), &m) == nil && m["reason"] == "answered"
	}
	return false
}

// nextRaw returns the next event, or errStreamEnded.
func (s *sseStream) nextRaw(t *testing.T) (sseEvent, error) {
	t.Helper()
	ctx := testContext(t, streamTimeout)
	select {
	case ev, ok := <-s.events:
		if !ok {
			return sseEvent{}, errStreamEnded
		}
		if ev.Data != "" {
			if err := hitltest.CheckStreamMessage([]byte(ev.Data)); err != nil {
				t.Error(err)
			}
		}
		return ev, nil
	case <-ctx.Done():
		t.Fatalf("no event within %s", streamTimeout)
		return sseEvent{}, nil
	}
}

// nextType returns the next event (see next), checking its type, and its
// data and id (0 when it has none).
func (s *sseStream) nextType(t *testing.T, typ string) (data map[string]any, id int64) {
	t.Helper()
	ev, err := s.next(t)
	if err != nil {
		t.Fatalf("want %s: %v", typ, err)
	}
	return checkSSE(t, ev, typ)
}

// checkSSE checks an event's type, decodes its data and parses its id (0
// when it has none).
func checkSSE(t *testing.T, ev sseEvent, typ string) (data map[string]any, id int64) {
	t.Helper()
	if ev.Event != typ {
		t.Fatalf("event %q (%s), want %q", ev.Event, ev.Data, typ)
	}
	if err := json.Unmarshal([]byte(ev.Data), &data); err != nil {
		t.Fatalf("data %q: %v", ev.Data, err)
	}
	if data["type"] != typ {
		t.Errorf("data type %v, want %s", data["type"], typ)
	}
	if ev.ID == "" {
		return data, 0
	}
	id, err := strconv.ParseInt(ev.ID, 10, 64)
	if err != nil {
		t.Fatalf("id %q: %v", ev.ID, err)
	}
	if seq, ok := data["seq"].(float64); ok && int64(seq) != id {
		t.Errorf("%s: seq %v, id %d; want them equal", typ, data["seq"], id)
	}
	return data, id
}

// expect reads the next event (see next) and checks its type,
// interaction and id, which must be after after; an event without an id
// (a replayed question, or hitl:resolved, whose hitl:cancel has it)
// returns after.
func (s *sseStream) expect(t *testing.T, typ, interactionID string, after int64) int64 {
	t.Helper()
	data, id := s.nextType(t, typ)
	if data["interaction_id"] != interactionID {
		t.Fatalf("%s for %v, want %s", typ, data["interaction_id"], interactionID)
	}
	if id == 0 {
		return after
	}
	if id <= after {
		t.Fatalf("%s id %d, want after %d", typ, id, after)
	}
	return id
}

// replay reads the replay a stream starts with: the questions (their
// ids, in order, none with an id), then hitl:replay_done, whose data and
// id it returns.
func (s *sseStream) replay(t *testing.T) (ids []string, done map[string]any, id int64) {
	t.Helper()
	for {
		ev, err := s.nextRaw(t)
		if err != nil {
			t.Fatalf("in the replay: %v", err)
		}
		if ev.Event == "hitl:replay_done" {
			done, id = checkSSE(t, ev, "hitl:replay_done")
			return ids, done, id
		}
		data, qid := checkSSE(t, ev, "hitl:question")
		if qid != 0 {
			t.Errorf("replayed question %v has id %d", data["interaction_id"], qid)
		}
		ids = append(ids, data["interaction_id"].(string))
	}
}

// Close disconnects the client.
func (s *sseStream) Close() {
	s.cancel()
	for range s.events {
	}
}

func TestSSEEvents(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	s := openSSE(t, ts, "", "")
	if ids, done, id := s.replay(t); len(ids) != 0 || fmt.Sprint(done["pending"]) != "[]" || id != 0 {
		t.Fatalf("replay of an empty inbox: %v, %v, id %d", ids, done, id)
	}

	a := ts.create(t, map[string]any{"interaction_type": "approval", "question": "Ship it?", "source_agent": "deployer"})
	data, id := s.nextType(t, "hitl:question")
	if data["interaction_id"] != a.ID || data["question"] != "Ship it?" || data["source_agent"] != "deployer" || id == 0 {
		t.Errorf("question data %v, id %d", data, id)
	}
	// An answer: hitl:resolved, then hitl:cancel, which alone carries the
	// id (a client that drops between the two resumes before both).
	ts.mustDo(t, "POST", "/api/v1/interactions/"+a.ID+"/respond", map[string]any{"value": "approve"}, http.StatusOK, nil)
	ev, err := s.nextRaw(t)
	if err != nil {
		t.Fatal(err)
	}
	data, noID := checkSSE(t, ev, "hitl:resolved")
	id2 := int64(data["seq"].(float64))
	want := map[string]any{"type": "hitl:resolved", "interaction_id": a.ID, "status": "answered", "responded_by": hitl.LocalCaller, "channel": "api", "seq": float64(id2)}
	if !reflect.DeepEqual(data, want) || noID != 0 {
		t.Errorf("resolved data %v id %d, want %v and no id", data, noID, want)
	}
	if ev, err = s.nextRaw(t); err != nil {
		t.Fatal(err)
	}
	data, id3 := checkSSE(t, ev, "hitl:cancel")
	want = map[string]any{"type": "hitl:cancel", "interaction_id": a.ID, "reason": "answered", "seq": float64(id2)}
	if !reflect.DeepEqual(data, want) || id3 != id2 || id2 <= id {
		t.Errorf("cancel after the answer: %v id %d, want %v with id %d (after %d)", data, id3, want, id2, id)
	}

	// A notification is logged but not streamed.
	b := ts.create(t, map[string]any{"question": "Name?"})
	id4 := s.expect(t, "hitl:question", b.ID, id3)
	if _, err := ts.Broker.AppendEvent(t.Context(), &hitl.Event{Type: hitl.EventNotified, InteractionID: b.ID, Channel: hitl.ChannelSlack}); err != nil {
		t.Fatalf("append notified: %v", err)
	}
	ts.mustDo(t, "POST", "/api/v1/interactions/"+b.ID+"/cancel", map[string]any{"reason": "moved on"}, http.StatusOK, nil)
	data, id5 := s.nextType(t, "hitl:cancel")
	if data["interaction_id"] != b.ID || data["reason"] != "moved on" {
		t.Errorf("cancel data %v", data)
	}
	if id5 <= id4+1 {
		t.Errorf("cancel id %d, want after the notified event (question was %d)", id5, id4)
	}
}

func TestSSEResumeWithLastEventID(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	s := openSSE(t, ts, "", "")
	s.replay(t)
	a := ts.create(t, map[string]any{"question": "A?"})
	seen := s.expect(t, "hitl:question", a.ID, 0)
	s.Close()

	// Missed while disconnected.
	ts.mustDo(t, "POST", "/api/v1/interactions/"+a.ID+"/respond", map[string]any{"value": "done"}, http.StatusOK, nil)
	b := ts.create(t, map[string]any{"question": "B?"})
	if _, err := ts.Broker.AppendEvent(t.Context(), &hitl.Event{Type: hitl.EventNotified, InteractionID: b.ID, Channel: hitl.ChannelSlack}); err != nil {
		t.Fatalf("append notified: %v", err)
	}
	ts.mustDo(t, "POST", "/api/v1/interactions/"+b.ID+"/cancel", nil, http.StatusOK, nil)
	c := ts.create(t, map[string]any{"question": "C?"})
	last, err := ts.Store.LastEventSeq(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	missed := []struct{ typ, id, reason string }{
		{"hitl:resolved", a.ID, ""}, {"hitl:cancel", a.ID, "answered"},
		{"hitl:question", b.ID, ""}, {"hitl:cancel", b.ID, "agent_cancelled"}, {"hitl:question", c.ID, ""},
	}

	// The header (as EventSource sends it) and the query parameter (for a
	// page that kept the id) resume the same way: what was missed, in
	// order, then hitl:replay_done (resumed) with the id the client has.
	resumed := []*sseStream{
		openSSE(t, ts, strconv.FormatInt(seen, 10), ""),
		openSSE(t, ts, "", "?last_event_id="+strconv.FormatInt(seen, 10)),
	}
	for _, r := range resumed {
		for _, m := range missed {
			ev, err := r.nextRaw(t)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := checkSSE(t, ev, m.typ)
			if data["interaction_id"] != m.id || (m.reason != "" && data["reason"] != m.reason) {
				t.Errorf("missed: got %v, want %s %s %s", data, m.typ, m.id, m.reason)
			}
		}
		ev, err := r.nextRaw(t)
		if err != nil {
			t.Fatal(err)
		}
		done, id := checkSSE(t, ev, "hitl:replay_done")
		if want := map[string]any{"type": "hitl:replay_done", "seq": float64(last), "resumed": true}; !reflect.DeepEqual(done, want) || id != last {
			t.Errorf("end of the resume: %v id %d, want %v id %d", done, id, want, last)
		}
	}
	// Then live events, none twice: the next event after D's question is
	// C's answer.
	d := ts.create(t, map[string]any{"question": "D?"})
	ts.mustDo(t, "POST", "/api/v1/interactions/"+c.ID+"/respond", map[string]any{"value": "ok"}, http.StatusOK, nil)
	for _, r := range resumed {
		id := r.expect(t, "hitl:question", d.ID, last)
		r.expect(t, "hitl:resolved", c.ID, id)
	}
}

func TestSSEWithoutLastEventIDSendsPending(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	a := ts.create(t, map[string]any{"question": "A?"})
	gone := ts.create(t, map[string]any{"question": "Gone?"})
	ts.mustDo(t, "POST", "/api/v1/interactions/"+gone.ID+"/cancel", nil, http.StatusOK, nil)
	b := ts.create(t, map[string]any{"question": "B?"})
	start, err := ts.Store.LastEventSeq(t.Context())
	if err != nil {
		t.Fatal(err)
	}

	// Pending questions, oldest first, without ids, then hitl:replay_done
	// with their ids and, as its id, the newest event so far. An id from
	// another event log (beyond the newest) starts over the same way.
	for _, lastEventID := range []string{"", strconv.FormatInt(start+1000, 10)} {
		s := openSSE(t, ts, lastEventID, "")
		ids, done, id := s.replay(t)
		want := map[string]any{"type": "hitl:replay_done", "seq": float64(start), "resumed": false, "pending": []any{a.ID, b.ID}}
		if fmt.Sprint(ids) != fmt.Sprint([]string{a.ID, b.ID}) || !reflect.DeepEqual(done, want) || id != start {
			t.Errorf("Last-Event-ID %q: replay %v then %v id %d; want %v then %v id %d", lastEventID, ids, done, id, []string{a.ID, b.ID}, want, start)
		}
		s.Close()
	}

	// Resuming from that id sends nothing again; the next event is live.
	s := openSSE(t, ts, strconv.FormatInt(start, 10), "")
	c := ts.create(t, map[string]any{"question": "C?"})
	s.expect(t, "hitl:question", c.ID, start)
}

func TestSSEBadLastEventID(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	for _, tc := range []struct{ header, query string }{
		{"abc", ""}, {"-1", ""}, {"1.5", ""}, {"", "?last_event_id=x"}, {"", "?last_event_id=-3"},
	} {
		req, err := http.NewRequestWithContext(t.Context(), "GET", ts.URL+"/api/v1/events"+tc.query, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc.header != "" {
			req.Header.Set("Last-Event-ID", tc.header)
		}
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error struct{ Code, Message string }
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || err != nil || body.Error.Code != "invalid" || !strings.Contains(body.Error.Message, "Last-Event-ID") {
			t.Errorf("Last-Event-ID %q, query %q: status %d, body %+v (%v); want 400 invalid naming Last-Event-ID", tc.header, tc.query, resp.StatusCode, body, err)
		}
	}
}

func TestStreamMetrics(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	c := dialWS(t, ts, nil)
	s := openSSE(t, ts, "", "")
	in := ts.create(t, map[string]any{"question": "Counted?"})
	readWSType(t, c, "hitl:question", in.ID)
	s.expect(t, "hitl:question", in.ID, 0)

	_, body := ts.do(t, "GET", "/metrics", nil)
	for _, want := range []string{`hitl_streams_open{kind="sse"} 1`, `hitl_streams_open{kind="ws"} 1`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}
