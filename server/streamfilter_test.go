package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/turns"
)

// dialWSAt opens a WebSocket to path (with its query) on ts.
func dialWSAt(t *testing.T, ts *testServer, path string) *websocket.Conn {
	t.Helper()
	url := "ws" + strings.TrimPrefix(ts.URL, "http") + path
	c, resp, err := websocket.Dial(testContext(t, streamTimeout), url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("dial %s: status %d, want 101", url, resp.StatusCode)
	}
	c.SetReadLimit(1 << 20)
	t.Cleanup(func() { _ = c.CloseNow() })
	return c
}

// TestStreamSessionFilter: the AI-Parrot HITL contract's chat connects to
// /ws/userinfo and follows its own sessions. With ?session_id= (one or
// more), a stream — WebSocket at either path, or SSE — carries only those
// sessions' questions and outcomes, replay included; without it,
// everything.
func TestStreamSessionFilter(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	ask := func(session, q string) *hitl.Interaction {
		req := map[string]any{"question": q}
		if session != "" {
			req["session_id"] = session
		}
		return ts.create(t, req)
	}
	pendingA := ask("chat-a", "Pending in A?")
	ask("chat-c", "Pending in C?")
	ask("", "Pending in no session?")

	const filtered = "?session_id=chat-a&session_id=chat-b"
	ws := []*websocket.Conn{dialWSAt(t, ts, "/ws/userinfo"+filtered), dialWSAt(t, ts, "/ws"+filtered)}
	sse := openSSE(t, ts, "", filtered)
	all := dialWSAt(t, ts, "/ws/userinfo")
	for i, c := range ws {
		ids, done := readReplay(t, c)
		if fmt.Sprint(ids) != fmt.Sprint([]string{pendingA.ID}) || fmt.Sprint(done["pending"]) != fmt.Sprint(ids) {
			t.Errorf("WebSocket %d: replay %v, %v; want only %s", i, ids, done, pendingA.ID)
		}
	}
	if ids, done, _ := sse.replay(t); fmt.Sprint(ids) != fmt.Sprint([]string{pendingA.ID}) || fmt.Sprint(done["pending"]) != fmt.Sprint(ids) {
		t.Errorf("SSE: replay %v, %v; want only %s", ids, done, pendingA.ID)
	}
	if ids, _ := readReplay(t, all); len(ids) != 3 {
		t.Errorf("unfiltered: replay %v, want all 3 pending", ids)
	}

	// Live: only A and B, each question and its outcome. Every message
	// about C comes before B's in time, so a leak would be read first.
	c1 := ask("chat-c", "Live in C?")
	ts.mustDo(t, "POST", "/api/v1/interactions/"+c1.ID+"/cancel", nil, http.StatusOK, nil)
	b := ask("chat-b", "Live in B?")
	ts.mustDo(t, "POST", "/api/v1/interactions/"+pendingA.ID+"/respond", map[string]any{"value": "yes"}, http.StatusOK, nil)
	ts.mustDo(t, "POST", "/api/v1/interactions/"+b.ID+"/cancel", nil, http.StatusOK, nil)
	for i, c := range ws {
		for _, want := range []struct{ typ, id string }{
			{"hitl:question", b.ID}, {"hitl:resolved", pendingA.ID}, {"hitl:cancel", pendingA.ID}, {"hitl:cancel", b.ID},
		} {
			if m := readWSRaw(t, c); m["type"] != want.typ || m["interaction_id"] != want.id {
				t.Fatalf("WebSocket %d: got %v, want %s for %s", i, m, want.typ, want.id)
			}
		}
	}
	for _, want := range []struct{ typ, id string }{
		{"hitl:question", b.ID}, {"hitl:resolved", pendingA.ID}, {"hitl:cancel", pendingA.ID}, {"hitl:cancel", b.ID},
	} {
		ev, err := sse.nextRaw(t)
		if err != nil {
			t.Fatal(err)
		}
		if data, _ := checkSSE(t, ev, want.typ); data["interaction_id"] != want.id {
			t.Fatalf("SSE: got %v, want %s for %s", data, want.typ, want.id)
		}
	}
	// The unfiltered stream got C's question too.
	readWSType(t, all, "hitl:question", c1.ID)
}

func TestStreamSessionFilterRefusesBadValues(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	many := strings.Repeat("session_id=s&", 101)
	for _, path := range []string{"/ws/userinfo", "/api/v1/events"} {
		for _, q := range []string{"?session_id=", "?session_id=" + strings.Repeat("x", 257), "?" + many} {
			req, err := http.NewRequestWithContext(t.Context(), "GET", ts.URL+path+q, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Connection", "Upgrade")
			req.Header.Set("Upgrade", "websocket")
			resp, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("%s%.40s: status %d, want 400", path, q, resp.StatusCode)
			}
		}
	}
}
