package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/turns"
)

// heldFor is how long the long-lived stream tests keep a connection open:
// past two WebSocket pings (every 30 s), several SSE keepalives (every
// 15 s), and well past every write timeout (10 s), so that anything the
// first minute of a connection leaves behind shows.
const heldFor = 65 * time.Second

// heldRounds is how many times, spread over heldFor, the long-lived tests
// ask, answer and cancel.
const heldRounds = 5

// wsReader reads a WebSocket for the test's whole life in the background,
// as a browser does (answering the server's pings as it reads), and hands
// each message on.
type wsReader struct {
	msgs <-chan map[string]any // closed when the connection ends
	err  *error                // why it ended, once msgs is closed
}

func readWSInBackground(t *testing.T, c *websocket.Conn) *wsReader {
	t.Helper()
	ch := make(chan map[string]any, 64)
	r := &wsReader{msgs: ch, err: new(error)}
	go func() {
		defer close(ch)
		for {
			_, data, err := c.Read(t.Context())
			if err != nil {
				*r.err = err
				return
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				*r.err = fmt.Errorf("decode %s: %w", data, err)
				return
			}
			ch <- m
		}
	}()
	return r
}

// expect waits for the next message (past markers, as readWS) and checks
// its type and interaction.
func (r *wsReader) expect(t *testing.T, typ, id string) {
	t.Helper()
	timeout := time.After(streamTimeout)
	for {
		select {
		case m, ok := <-r.msgs:
			if !ok {
				t.Fatalf("the WebSocket ended while waiting for %s %s: %v", typ, id, *r.err)
			}
			if marker(m) {
				continue
			}
			if m["type"] != typ || m["interaction_id"] != id {
				t.Fatalf("got %v %v, want %s %s: %v", m["type"], m["interaction_id"], typ, id, m)
			}
			return
		case <-timeout:
			t.Fatalf("no %s for %s within %s", typ, id, streamTimeout)
		}
	}
}

// heldRound asks a question, answers it, asks another and cancels it,
// expecting the three kinds of message a live client must get.
func (ts *testServer) heldRound(t *testing.T, round int, expect func(typ, id string)) {
	t.Helper()
	asked := ts.create(t, map[string]any{"interaction_type": "approval", "question": fmt.Sprintf("Round %d: ship it?", round)})
	expect("hitl:question", asked.ID)
	ts.mustDo(t, "POST", "/api/v1/interactions/"+asked.ID+"/respond", map[string]any{"value": true}, http.StatusOK, nil)
	expect("hitl:resolved", asked.ID)
	dropped := ts.create(t, map[string]any{"question": fmt.Sprintf("Round %d: name?", round)})
	expect("hitl:question", dropped.ID)
	ts.mustDo(t, "POST", "/api/v1/interactions/"+dropped.ID+"/cancel", nil, http.StatusOK, nil)
	expect("hitl:cancel", dropped.ID)
}

// everyRound calls round(i) heldRounds times, spread evenly over heldFor,
// the last at its end.
func everyRound(t *testing.T, round func(i int)) {
	t.Helper()
	tick := time.NewTicker(heldFor / heldRounds)
	defer tick.Stop()
	for i := range heldRounds {
		select {
		case <-tick.C:
		case <-t.Context().Done():
			return
		}
		round(i)
	}
}

// A WebSocket that replayed a pending question stays open and keeps
// delivering: the replay's write must leave no deadline on the connection
// behind it (it once did, and every open inbox dropped at its first ping).
func TestWebSocketHeldOpenWithPendingQuestions(t *testing.T) {
	if testing.Short() {
		t.Skip("holds a connection for over a minute")
	}
	turns.Idle(t) // over a minute, most of it waiting
	ts := newTestServer(t)
	waiting := ts.create(t, map[string]any{"question": "Still there?"})

	c := dialWS(t, ts, nil)
	if ids, _ := readReplay(t, c); len(ids) != 1 || ids[0] != waiting.ID {
		t.Fatalf("replay %v, want %s", ids, waiting.ID)
	}
	r := readWSInBackground(t, c)
	everyRound(t, func(i int) {
		ts.heldRound(t, i, func(typ, id string) { r.expect(t, typ, id) })
	})
	// The question pending since the start is still delivered about.
	ts.mustDo(t, "POST", "/api/v1/interactions/"+waiting.ID+"/respond", map[string]any{"value": "yes"}, http.StatusOK, nil)
	r.expect(t, "hitl:resolved", waiting.ID)
	if got := ts.API.WebSockets(); got != 1 {
		t.Errorf("open WebSockets after %s: %d, want 1", heldFor, got)
	}
}

// The same over Server-Sent Events, whose writes also carry deadlines.
func TestSSEHeldOpenWithPendingQuestions(t *testing.T) {
	if testing.Short() {
		t.Skip("holds a connection for over a minute")
	}
	turns.Idle(t) // over a minute, most of it waiting
	ts := newTestServer(t)
	waiting := ts.create(t, map[string]any{"question": "Still there?"})

	s := openSSE(t, ts, "", "")
	defer s.Close()
	if ids, _, _ := s.replay(t); len(ids) != 1 || ids[0] != waiting.ID {
		t.Fatalf("replay %v, want %s", ids, waiting.ID)
	}
	everyRound(t, func(i int) {
		ts.heldRound(t, i, func(typ, id string) { s.expect(t, typ, id, 0) })
	})
	ts.mustDo(t, "POST", "/api/v1/interactions/"+waiting.ID+"/respond", map[string]any{"value": "yes"}, http.StatusOK, nil)
	s.expect(t, "hitl:resolved", waiting.ID, 0)
}

// A long-poll held in its handler, and a parked one, stay open past every
// deadline in their path (the body's, the parked connections' sweeps, a
// minute) while
// other questions are asked, answered and cancelled, and the waiting agent
// still gets its own answer.
func TestWaitHeldOpen(t *testing.T) {
	if testing.Short() {
		t.Skip("holds a connection for over a minute")
	}
	turns.Idle(t)
	for _, tc := range []struct {
		name, gauge string
		start       func(*testing.T) *testServer
	}{
		{"held", "hitl_waits_held", newTestServer},
		{"parked", "hitl_waits_parked", func(t *testing.T) *testServer { return newParkingServer(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			turns.Idle(t) // over a minute, most of it waiting
			ts := tc.start(t)
			waited := ts.create(t, map[string]any{"interaction_type": "approval", "question": "Still waiting?"})
			type result struct {
				status int
				body   []byte
				err    error
			}
			done := make(chan result, 1)
			go func() {
				req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.URL+"/api/v1/interactions/"+waited.ID+"/wait?timeout=600", nil)
				if err != nil {
					done <- result{err: err}
					return
				}
				resp, err := ts.Client().Do(req)
				if err != nil {
					done <- result{err: err}
					return
				}
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				done <- result{resp.StatusCode, body, err}
			}()
			waitUntil(t, "the wait to be "+tc.name, func() bool { return waitsGauge(t, ts, tc.gauge) == 1 })
			everyRound(t, func(i int) {
				asked := ts.create(t, map[string]any{"interaction_type": "approval", "question": fmt.Sprintf("Round %d: ship it?", i)})
				ts.mustDo(t, "POST", "/api/v1/interactions/"+asked.ID+"/respond", map[string]any{"value": true}, http.StatusOK, nil)
				dropped := ts.create(t, map[string]any{"question": fmt.Sprintf("Round %d: name?", i)})
				ts.mustDo(t, "POST", "/api/v1/interactions/"+dropped.ID+"/cancel", nil, http.StatusOK, nil)
				select {
				case r := <-done:
					t.Fatalf("round %d: the wait ended before its answer: %d %s %v", i, r.status, r.body, r.err)
				default:
				}
			})
			if n := waitsGauge(t, ts, tc.gauge); n != 1 {
				t.Errorf("%s after %s: %d, want 1", tc.gauge, heldFor, n)
			}
			ts.mustDo(t, "POST", "/api/v1/interactions/"+waited.ID+"/respond", map[string]any{"value": true}, http.StatusOK, nil)
			r := <-done
			var got hitl.Interaction
			if r.err != nil || r.status != http.StatusOK || json.Unmarshal(r.body, &got) != nil || got.ID != waited.ID || got.Status != hitl.StatusAnswered {
				t.Fatalf("the wait returned %d %s (%v), want %s answered", r.status, r.body, r.err, waited.ID)
			}
		})
	}
}
