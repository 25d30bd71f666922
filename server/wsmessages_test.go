package server_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/coder/websocket"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/turns"
)

// marker reports whether m is a message readWS reads past.
func marker(m map[string]any) bool {
	return m["type"] == "hitl:replay_done" || (m["type"] == "hitl:cancel" && m["reason"] == "answered")
}

// readWSRaw reads one JSON text message.
func readWSRaw(t *testing.T, c *websocket.Conn) map[string]any {
	t.Helper()
	ctx := testContext(t, streamTimeout)
	typ, data, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("read WebSocket message: %v", err)
	}
	if typ != websocket.MessageText {
		t.Fatalf("message type %v, want text", typ)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("decode message %s: %v", data, err)
	}
	if err := hitltest.CheckStreamMessage(data); err != nil {
		t.Error(err)
	}
	return m
}

// readReplay reads the replay a connection starts with: the questions
// (their ids, in order), then hitl:replay_done, which it returns.
func readReplay(t *testing.T, c *websocket.Conn) (ids []string, done map[string]any) {
	t.Helper()
	for {
		m := readWSRaw(t, c)
		switch m["type"] {
		case "hitl:replay_done":
			return ids, m
		case "hitl:question":
			if _, ok := m["seq"]; ok {
				t.Errorf("replayed question %v has a seq", m["interaction_id"])
			}
			ids = append(ids, m["interaction_id"].(string))
		default:
			t.Fatalf("in the replay: %v", m)
		}
	}
}

// TestWebSocketResolvedAndCancel: every way out of pending ends in a
// hitl:cancel, so a client that knows only the contract's two messages
// never keeps a question that is over; an answer is announced first by
// hitl:resolved, with who and how. Both messages of an event carry its
// seq.
func TestWebSocketResolvedAndCancel(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	c := dialWS(t, ts, nil)
	readReplay(t, c)

	// next reads the messages about in after its question, up to and
	// including the hitl:cancel, and checks they share one seq.
	next := func(in *hitl.Interaction) []map[string]any {
		t.Helper()
		var got []map[string]any
		for {
			m := readWSRaw(t, c)
			if m["interaction_id"] != in.ID {
				t.Fatalf("a message about another interaction: %v", m)
			}
			got = append(got, m)
			if m["type"] == "hitl:cancel" {
				break
			}
		}
		first := got[0]["seq"]
		for _, m := range got {
			if seq, ok := m["seq"].(float64); !ok || seq != first {
				t.Errorf("%v: seq %v, want a number, the same for the event's messages", m["type"], m["seq"])
			}
			delete(m, "seq")
		}
		return got
	}
	ask := func(req map[string]any) *hitl.Interaction {
		t.Helper()
		in := ts.create(t, req)
		readWSType(t, c, "hitl:question", in.ID)
		return in
	}
	cancel := func(in *hitl.Interaction, reason string) map[string]any {
		return map[string]any{"type": "hitl:cancel", "interaction_id": in.ID, "reason": reason}
	}

	// Answered over HTTP: hitl:resolved with who and through which
	// channel, then hitl:cancel.
	in := ask(map[string]any{"interaction_type": "approval", "question": "Ship it?"})
	ts.mustDo(t, "POST", "/api/v1/interactions/"+in.ID+"/respond", map[string]any{"value": true, "channel": "web"}, http.StatusOK, nil)
	want := []map[string]any{
		{"type": "hitl:resolved", "interaction_id": in.ID, "status": "answered", "responded_by": hitl.LocalCaller, "channel": "web"},
		cancel(in, "answered"),
	}
	if got := next(in); !reflect.DeepEqual(got, want) {
		t.Errorf("answered: got %v, want %v", got, want)
	}

	// Cancelled by the agent, without and with a reason.
	for _, tc := range []struct {
		body any
		want string
	}{
		{nil, "agent_cancelled"},
		{map[string]any{"reason": "user left the chat"}, "user left the chat"},
	} {
		in := ask(map[string]any{"question": "Name?"})
		ts.mustDo(t, "POST", "/api/v1/interactions/"+in.ID+"/cancel", tc.body, http.StatusOK, nil)
		if got, want := next(in), []map[string]any{cancel(in, tc.want)}; !reflect.DeepEqual(got, want) {
			t.Errorf("cancel: got %v, want %v", got, want)
		}
	}

	// The deadline passes, from the broker's own timer: hitl:cancel with
	// reason timeout; with on_timeout default, after hitl:resolved saying
	// the default was used.
	in = ask(map[string]any{"question": "Quick?", "timeout": 0.2})
	if got, want := next(in), []map[string]any{cancel(in, "timeout")}; !reflect.DeepEqual(got, want) {
		t.Errorf("expiry: got %v, want %v", got, want)
	}
	in = ask(map[string]any{"question": "Quick, or the default?", "timeout": 0.2, "on_timeout": "default", "default_response": "later"})
	want = []map[string]any{
		{"type": "hitl:resolved", "interaction_id": in.ID, "status": "answered", "responded_by": "", "channel": "timeout", "timed_out": true},
		cancel(in, "timeout"),
	}
	if got := next(in); !reflect.DeepEqual(got, want) {
		t.Errorf("default at the deadline: got %v, want %v", got, want)
	}
}
