package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/turns"
)

// dialUserinfo opens the AI-Parrot contract's channel, ws/userinfo, with
// an optional query.
func dialUserinfo(t *testing.T, ts *testServer, query string) *websocket.Conn {
	t.Helper()
	u := "ws" + strings.TrimPrefix(ts.URL, "http") + "/ws/userinfo" + query
	c, resp, err := websocket.Dial(testContext(t, streamTimeout), u, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", u, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("dial: status %d, want 101", resp.StatusCode)
	}
	t.Cleanup(func() { _ = c.CloseNow() })
	return c
}

// handoffRequest is an agent handing the conversation of session to a
// person.
func handoffRequest(session string) map[string]any {
	return map[string]any{
		"interaction_type": "handoff",
		"question":         "I can't change a booking that is already paid; a colleague will take it from here.",
		"context":          "Booking **B-1432**, paid by card.",
		"session_id":       session,
		"source_agent":     "travel_desk",
		"timeout":          600,
	}
}

// TestHandoffOverTheContractChannel: a handoff is created at once, the
// contract channel shows it as hitl:handoff (never hitl:question, which a
// frontend would render as a prompt), the person's reply through the
// contract's respond route reaches the agent's wait, exactly once, and
// the channel ends it with hitl:resolved and hitl:cancel.
func TestHandoffOverTheContractChannel(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	c := dialUserinfo(t, ts, "?session_id=chat-7")
	if ids, _ := readReplay(t, c); len(ids) != 0 {
		t.Fatalf("replay of an empty server: %v", ids)
	}

	in := ts.create(t, handoffRequest("chat-7"))
	if in.Type != hitl.TypeHandoff || in.Status != hitl.StatusPending || len(in.Options) != 0 {
		t.Fatalf("created %s %s with options %v; want a pending handoff without options", in.Type, in.Status, in.Options)
	}

	m := readWSRaw(t, c)
	if m["type"] != "hitl:handoff" {
		t.Fatalf("first message %v, want hitl:handoff", m)
	}
	want := map[string]any{
		"type":             "hitl:handoff",
		"interaction_id":   in.ID,
		"interaction_type": "handoff",
		"session_id":       "chat-7",
		"message":          in.Question,
		"context":          in.Context,
		"source_agent":     "travel_desk",
		"timeout":          float64(600),
	}
	for k, v := range want {
		if !reflect.DeepEqual(m[k], v) {
			t.Errorf("hitl:handoff %s = %#v, want %#v", k, m[k], v)
		}
	}
	checkContractTime(t, "deadline", m["deadline"], in.Deadline)
	for _, k := range []string{"question", "options", "form_schema"} {
		if _, ok := m[k]; ok {
			t.Errorf("hitl:handoff has %q, a question's field", k)
		}
	}

	waited := make(chan *hitl.Interaction, 1)
	go func() {
		var w hitl.Interaction
		ts.mustDo(t, "GET", "/api/v1/interactions/"+in.ID+"/wait?timeout=60", nil, http.StatusOK, &w)
		waited <- &w
	}()
	hitltest.Await(t, "the agent's orchestrator to wait", ts.Broker.WaitStarted(in.ID))

	reply := "Hi, this is Ana from the travel desk. I've moved your booking to Friday."
	ts.mustDo(t, "POST", "/api/v1/agents/hitl/respond", map[string]any{"interaction_id": in.ID, "value": reply}, http.StatusOK, nil)
	w := <-waited
	if w.Status != hitl.StatusAnswered || w.Result == nil {
		t.Fatalf("wait returned %s %+v, want answered", w.Status, w.Result)
	}
	var got string
	if err := json.Unmarshal(w.Result.Value, &got); err != nil || got != reply {
		t.Errorf("wait returned value %s, want the reply %q", w.Result.Value, reply)
	}

	// Exactly one reply wins: a second is refused, on either route.
	ts.mustDo(t, "POST", "/api/v1/interactions/"+in.ID+"/respond", map[string]any{"value": "Me too"}, http.StatusConflict, nil)
	ts.mustDo(t, "POST", "/api/v1/agents/hitl/respond", map[string]any{"interaction_id": in.ID, "value": "Me too"}, http.StatusNotFound, nil)

	for _, typ := range []string{"hitl:resolved", "hitl:cancel"} {
		m := readWSRaw(t, c)
		if m["type"] != typ || m["interaction_id"] != in.ID {
			t.Fatalf("got %v, want %s for the handoff", m, typ)
		}
		if typ == "hitl:resolved" && (m["status"] != "answered" || m["channel"] != "web") {
			t.Errorf("hitl:resolved %v, want answered through web", m)
		}
	}
}

// TestHandoffReplayedAsHandoff: a pending handoff is replayed on connect
// as hitl:handoff, on the contract's WebSocket, the native one and SSE,
// while a question beside it stays hitl:question.
func TestHandoffReplayedAsHandoff(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	q := ts.create(t, map[string]any{"question": "Which date?", "session_id": "chat-1"})
	h := ts.create(t, handoffRequest("chat-1"))
	want := map[string]string{q.ID: "hitl:question", h.ID: "hitl:handoff"}

	for _, c := range []*websocket.Conn{dialUserinfo(t, ts, ""), dialWS(t, ts, nil)} {
		got := map[string]string{}
		for {
			m := readWSRaw(t, c)
			if m["type"] == "hitl:replay_done" {
				break
			}
			got[m["interaction_id"].(string)] = m["type"].(string)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("WebSocket replay: %v, want %v", got, want)
		}
	}

	s := openSSE(t, ts, "", "")
	defer s.Close()
	got := map[string]string{}
	for {
		ev, err := s.nextRaw(t)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Event == "hitl:replay_done" {
			break
		}
		data, _ := checkSSE(t, ev, ev.Event)
		got[data["interaction_id"].(string)] = ev.Event
		if err := hitltest.CheckStreamMessage([]byte(ev.Data)); err != nil {
			t.Error(err)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SSE replay: %v, want %v", got, want)
	}
	// Live on SSE too.
	h2 := ts.create(t, handoffRequest("chat-2"))
	s.expect(t, "hitl:handoff", h2.ID, 0)
}

// TestHandoffReplies: a reply is a string with something in it, bounded
// as free text is; a handoff takes no options or form.
func TestHandoffReplies(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	in := ts.create(t, handoffRequest("chat-3"))
	for _, tc := range []struct {
		name  string
		value any
	}{
		{"empty", ""},
		{"blank", " \n\t"},
		{"a number", 42},
		{"a boolean", true},
		{"an object", map[string]any{"text": "hi"}},
		{"too long", strings.Repeat("a", hitl.MaxFreeTextLen+1)},
	} {
		status, body := ts.do(t, "POST", "/api/v1/interactions/"+in.ID+"/respond", map[string]any{"value": tc.value})
		if status != http.StatusUnprocessableEntity {
			t.Errorf("reply %s: status %d (%s), want 422", tc.name, status, body)
		}
	}
	for _, req := range []map[string]any{
		{"interaction_type": "handoff", "question": "Over to you", "options": []string{"a", "b"}},
		{"interaction_type": "handoff", "question": "Over to you", "form_schema": map[string]any{"type": "object"}},
		{"interaction_type": "handoff", "question": " "},
		{"interaction_type": "handoff", "question": "Over to you", "consensus": map[string]any{"mode": "majority"}},
	} {
		ts.mustDo(t, "POST", "/api/v1/interactions", req, http.StatusBadRequest, nil)
	}
	// The contract's response_type: handoff, or free_text from a frontend
	// that collected the reply in a text input.
	ts.mustDo(t, "POST", "/api/v1/agents/hitl/respond", map[string]any{"interaction_id": in.ID, "value": 1, "response_type": "free_text"}, http.StatusUnprocessableEntity, nil)
	ts.mustDo(t, "POST", "/api/v1/agents/hitl/respond", map[string]any{"interaction_id": in.ID, "value": "On it", "response_type": "free_text"}, http.StatusOK, nil)
}

// TestHandoffSurvivesRestart: the server stops between the handoff and the
// reply; the reply, made on the new server, reaches the orchestrator that
// waits again, and the new server's contract channel replays the handoff.
func TestHandoffSurvivesRestart(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	in := ts.create(t, handoffRequest("chat-9"))
	ts.Stop()

	ts2 := startTestServer(t, ts.Path)
	c := dialUserinfo(t, ts2, "?session_id=chat-9")
	m := readWSRaw(t, c)
	if m["type"] != "hitl:handoff" || m["interaction_id"] != in.ID {
		t.Fatalf("replay after restart: %v, want the hitl:handoff", m)
	}
	if m := readWSRaw(t, c); m["type"] != "hitl:replay_done" {
		t.Fatalf("after the handoff: %v, want hitl:replay_done", m)
	}

	waited := make(chan *hitl.Interaction, 1)
	go func() {
		var w hitl.Interaction
		ts2.mustDo(t, "GET", "/api/v1/interactions/"+in.ID+"/wait?timeout=60", nil, http.StatusOK, &w)
		waited <- &w
	}()
	hitltest.Await(t, "the orchestrator to wait on the new server", ts2.Broker.WaitStarted(in.ID))
	ts2.mustDo(t, "POST", "/api/v1/interactions/"+in.ID+"/respond", map[string]any{"value": "Back after the restart"}, http.StatusOK, nil)
	w := <-waited
	if w.Status != hitl.StatusAnswered || string(w.Result.Value) != `"Back after the restart"` {
		t.Fatalf("wait after restart: %s %+v, want the reply", w.Status, w.Result)
	}
	readWSType(t, c, "hitl:resolved", in.ID)
}

// TestHandoffWebhook: a webhook subscriber is told of the handoff and of
// the reply, with the interaction's type.
func TestHandoffWebhook(t *testing.T) {
	turns.Parallel(t)
	type delivery struct {
		Type hitl.WebhookEvent `json:"type"`
		Data *hitl.Interaction `json:"data"`
	}
	got := make(chan delivery, 10)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var d delivery
		if err := json.Unmarshal(body, &d); err != nil {
			t.Errorf("delivery %s: %v", body, err)
		}
		got <- d
	}))
	t.Cleanup(receiver.Close)
	admin, agent, _ := webhookServer(t, true)
	ctx := context.Background()
	if _, err := admin.AddWebhook(ctx, hitl.WebhookRequest{URL: receiver.URL, Events: []hitl.WebhookEvent{hitl.WebhookCreated, hitl.WebhookAnswered}}); err != nil {
		t.Fatal(err)
	}
	id, err := agent.Handoff(ctx, hitl.HandoffRequest{Message: "Over to a person", SessionID: "chat-4"})
	if err != nil {
		t.Fatalf("Handoff: %v", err)
	}
	if _, err := admin.Respond(ctx, id, json.RawMessage(`"Taking over"`)); err != nil {
		t.Fatalf("Respond: %v", err)
	}
	// Deliveries are sent concurrently: they may arrive in either order.
	seen := map[hitl.WebhookEvent]bool{}
	for range 2 {
		select {
		case d := <-got:
			if d.Type != hitl.WebhookCreated && d.Type != hitl.WebhookAnswered || seen[d.Type] || d.Data == nil || d.Data.ID != id || d.Data.Type != hitl.TypeHandoff {
				t.Fatalf("delivery %s %+v, want one created and one answered of the handoff", d.Type, d.Data)
			}
			seen[d.Type] = true
			if d.Type == hitl.WebhookAnswered && string(d.Data.Result.Value) != `"Taking over"` {
				t.Errorf("answered delivery's value %s, want the reply", d.Data.Result.Value)
			}
		case <-time.After(streamTimeout):
			t.Fatalf("deliveries so far %v; want created and answered", seen)
		}
	}
}
