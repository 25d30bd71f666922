package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
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

// next returns the next event, or errStreamEnded.
func (s *sseStream) next(t *testing.T) (sseEvent, error) {
	t.Helper()
	ctx := testContext(t, streamTimeout)
	select {
	case ev, ok := <-s.events:
		if !ok {
			return sseEvent{}, errStreamEnded
		}
		return ev, nil
	case <-ctx.Done():
		t.Fatalf("no event within %s", streamTimeout)
		return sseEvent{}, nil
	}
}

// nextType returns the next event, checking its type, its data's type
// field and its id.
func (s *sseStream) nextType(t *testing.T, typ string) (data map[string]any, id int64) {
	t.Helper()
	ev, err := s.next(t)
	if err != nil {
		t.Fatalf("want %s: %v", typ, err)
	}
	if ev.Event != typ {
		t.Fatalf("event %q (%s), want %q", ev.Event, ev.Data, typ)
	}
	if err := json.Unmarshal([]byte(ev.Data), &data); err != nil {
		t.Fatalf("data %q: %v", ev.Data, err)
	}
	if data["type"] != typ {
		t.Errorf("data type %v, want %s", data["type"], typ)
	}
	id, err = strconv.ParseInt(ev.ID, 10, 64)
	if err != nil {
		t.Fatalf("id %q: %v", ev.ID, err)
	}
	return data, id
}

// expect reads the next event and checks its type, interaction and id.
func (s *sseStream) expect(t *testing.T, typ, interactionID string, after int64) int64 {
	t.Helper()
	data, id := s.nextType(t, typ)
	if data["interaction_id"] != interactionID {
		t.Fatalf("%s for %v, want %s", typ, data["interaction_id"], interactionID)
	}
	if id <= after {
		t.Fatalf("%s id %d, want after %d", typ, id, after)
	}
	return id
}

// Close disconnects the client.
func (s *sseStream) Close() {
	s.cancel()
	for range s.events {
	}
}

func TestSSEEvents(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	s := openSSE(t, ts, "", "")

	a := ts.create(t, map[string]any{"interaction_type": "approval", "question": "Ship it?", "source_agent": "deployer"})
	data, id := s.nextType(t, "hitl:question")
	if data["interaction_id"] != a.ID || data["question"] != "Ship it?" || data["source_agent"] != "deployer" {
		t.Errorf("question data %v", data)
	}
	ts.mustDo(t, "POST", "/api/v1/interactions/"+a.ID+"/respond", map[string]any{"value": "approve"}, http.StatusOK, nil)
	data, id2 := s.nextType(t, "hitl:resolved")
	want := map[string]any{"type": "hitl:resolved", "interaction_id": a.ID, "status": "answered", "responded_by": hitl.LocalCaller, "channel": "api"}
	if !reflect.DeepEqual(data, want) {
		t.Errorf("resolved data %v, want %v", data, want)
	}
	if id2 <= id {
		t.Errorf("resolved id %d, want after %d", id2, id)
	}

	// A notification is logged but not streamed.
	b := ts.create(t, map[string]any{"question": "Name?"})
	id3 := s.expect(t, "hitl:question", b.ID, id2)
	if _, err := ts.Broker.AppendEvent(t.Context(), &hitl.Event{Type: hitl.EventNotified, InteractionID: b.ID, Channel: hitl.ChannelSlack}); err != nil {
		t.Fatalf("append notified: %v", err)
	}
	ts.mustDo(t, "POST", "/api/v1/interactions/"+b.ID+"/cancel", map[string]any{"reason": "moved on"}, http.StatusOK, nil)
	data, id4 := s.nextType(t, "hitl:cancel")
	if data["interaction_id"] != b.ID || data["reason"] != "moved on" {
		t.Errorf("cancel data %v", data)
	}
	if id4 <= id3+1 {
		t.Errorf("cancel id %d, want after the notified event (question was %d)", id4, id3)
	}
}

func TestSSEResumeWithLastEventID(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	s := openSSE(t, ts, "", "")
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
	missed := []struct{ typ, id string }{
		{"hitl:resolved", a.ID}, {"hitl:question", b.ID}, {"hitl:cancel", b.ID}, {"hitl:question", c.ID},
	}

	// The header (as EventSource sends it) and the query parameter (for a
	// page that kept the id) resume the same way.
	resumed := []*sseStream{
		openSSE(t, ts, strconv.FormatInt(seen, 10), ""),
		openSSE(t, ts, "", "?last_event_id="+strconv.FormatInt(seen, 10)),
	}
	for _, r := range resumed {
		last := seen
		for _, m := range missed {
			last = r.expect(t, m.typ, m.id, last)
		}
	}
	// Then live events, none twice: the next event after D's question is
	// C's answer.
	d := ts.create(t, map[string]any{"question": "D?"})
	ts.mustDo(t, "POST", "/api/v1/interactions/"+c.ID+"/respond", map[string]any{"value": "ok"}, http.StatusOK, nil)
	for _, r := range resumed {
		id := r.expect(t, "hitl:question", d.ID, seen)
		r.expect(t, "hitl:resolved", c.ID, id)
	}
}

func TestSSEWithoutLastEventIDSendsPending(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	a := ts.create(t, map[string]any{"question": "A?"})
	gone := ts.create(t, map[string]any{"question": "Gone?"})
	ts.mustDo(t, "POST", "/api/v1/interactions/"+gone.ID+"/cancel", nil, http.StatusOK, nil)
	b := ts.create(t, map[string]any{"question": "B?"})
	start, err := ts.Store.LastEventSeq(t.Context())
	if err != nil {
		t.Fatal(err)
	}

	// Pending questions, oldest first, each with the id of the newest event
	// so far. An id from another event log (beyond the newest) starts over
	// the same way.
	for _, lastEventID := range []string{"", strconv.FormatInt(start+1000, 10)} {
		s := openSSE(t, ts, lastEventID, "")
		for _, in := range []*hitl.Interaction{a, b} {
			data, id := s.nextType(t, "hitl:question")
			if data["interaction_id"] != in.ID || id != start {
				t.Errorf("Last-Event-ID %q: question %v id %d, want %s id %d", lastEventID, data["interaction_id"], id, in.ID, start)
			}
		}
		s.Close()
	}

	// Resuming from that id sends nothing again; the next event is live.
	s := openSSE(t, ts, strconv.FormatInt(start, 10), "")
	c := ts.create(t, map[string]any{"question": "C?"})
	s.expect(t, "hitl:question", c.ID, start)
}

func TestSSEBadLastEventID(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
