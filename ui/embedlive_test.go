package ui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/server"
)

// TestEmbedLongLived: the prompt's WebSocket stays open for over a minute
// while questions keep arriving, each shown as it comes; when the socket
// is cut, the prompt reconnects resuming where it was (?after=) and shows
// the question asked meanwhile.
func TestEmbedLongLived(t *testing.T) {
	turns.Idle(t) // over a minute, most of it waiting
	site := startHostSite(t)
	srv := newServerWith(t, serverOptions{auth: true, embedOrigins: []string{site.origin}})
	site.hitlURL = srv.URL
	admin := newToken(t, srv.IDs, "chat-backend", hitl.RoleAdmin)
	token := mintEmbedToken(t, srv, admin, "alice", 600, "chat-long")
	p := openTabAt(t, srv, fmt.Sprintf("%s/plain.html?session=chat-long&token=%s", site.origin, token), true, 150*time.Second)
	p.waitJS(`!!document.querySelector("hitl-prompt")?.shadowRoot`)

	start := time.Now()
	var ids []string
	for i := 0; time.Since(start) < 65*time.Second; i++ {
		if i == 4 {
			// Cut the socket; a question arrives while it is down.
			srv.faults.setWS(true)
			id := srv.ask(t, map[string]any{"question": fmt.Sprintf("Question %d, asked while the socket was down", i), "session_id": "chat-long"})
			time.Sleep(time.Second) // the prompt retries against a server that refuses it
			srv.faults.setWS(false)
			p.waitPromptText(id, "asked while the socket was down")
			ids = append(ids, id)
			continue
		}
		id := srv.ask(t, map[string]any{"question": fmt.Sprintf("Question %d", i), "session_id": "chat-long"})
		p.waitPromptText(id, fmt.Sprintf("Question %d", i))
		ids = append(ids, id)
		time.Sleep(7 * time.Second) // questions keep arriving over the minute
	}
	if n := eval[int](p, `window.hitlEvents.filter((e) => e.name === "hitl-question").length`); n != len(ids) {
		t.Errorf("%d questions shown, want %d", n, len(ids))
	}
	resumed := false
	for _, q := range srv.faults.wsQueryLog() {
		resumed = resumed || strings.Contains(q, "after=")
	}
	if !resumed {
		t.Errorf("no reconnect resumed (?after=): %v", srv.faults.wsQueryLog())
	}
	// The last question is still answerable over the same connection.
	last := ids[len(ids)-1]
	wait := srv.wait(t, last)
	p.focusIn(last, "textarea")
	p.keys("still here")
	p.do(ctrlEnter())
	assertEmbedValue(t, awaitResult(t, wait), `"still here"`)
}

// TestEmbedHandoffAcrossRestart: an agent hands chat-h to a person; the
// handoff shows in the chat's prompt; hitl restarts; the person's reply,
// typed in the prompt after the restart, reaches the agent's side on the
// contract channel (hitl:resolved), the webhook and the wait.
func TestEmbedHandoffAcrossRestart(t *testing.T) {
	turns.Parallel(t)
	site := startHostSite(t)
	hooks := make(chan []byte, 16)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		hooks <- body
	}))
	t.Cleanup(receiver.Close)
	s := hitltest.Start(t, &hitltest.Options{
		People: true,
		Server: &server.Options{EmbedOrigins: []string{site.origin}},
		Configure: func(t testing.TB, e *hitltest.Engine, opts *server.Options) {
			addChannels(t, e, serverOptions{webhooks: true}, opts)
		},
	})
	site.hitlURL = s.URL
	agent := s.Token(t, "support-bot", hitl.RoleAgent)
	admin := s.Token(t, "chat-backend", hitl.RoleAdmin)
	call := func(token, method, path string, body any) (int, []byte) {
		t.Helper()
		data, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, s.URL+path, bytes.NewReader(data))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, out
	}
	if code, data := call(admin, "POST", "/api/v1/webhooks", map[string]any{"url": receiver.URL + "/hook", "events": []string{"interaction.answered"}}); code != http.StatusCreated {
		t.Fatalf("subscribe: %d %s", code, data)
	}
	code, data := call(admin, "POST", "/api/v1/embed-tokens", map[string]any{"user": "alice", "session_ids": []string{"chat-h"}})
	if code != http.StatusCreated {
		t.Fatalf("mint: %d %s", code, data)
	}
	var tok struct{ Token string }
	_ = json.Unmarshal(data, &tok)
	code, data = call(agent, "POST", "/api/v1/interactions", map[string]any{"interaction_type": "handoff", "session_id": "chat-h",
		"question": "The customer wants to talk to a person about order 1432.", "source_agent": "support-bot"})
	if code != http.StatusCreated {
		t.Fatalf("handoff: %d %s", code, data)
	}
	var in struct {
		ID string `json:"interaction_id"`
	}
	_ = json.Unmarshal(data, &in)

	srvForTabs := &hitlServer{Server: s.Server}
	p := openTabAt(t, srvForTabs, fmt.Sprintf("%s/plain.html?session=chat-h&token=%s", site.origin, tok.Token), true, 90*time.Second)
	p.waitPromptText(in.ID, "The agent handed this conversation to a person — you can reply now.")

	// hitl restarts; the agent's orchestrator listens again on the
	// contract channel and waits.
	s = s.Restart(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL, "http")+"/ws/userinfo?session_id=chat-h",
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + agent}}})
	if err != nil {
		t.Fatalf("the agent's contract channel: %v", err)
	}
	defer ws.CloseNow()
	waited := make(chan []byte, 1)
	go func() {
		_, body := call(agent, "GET", "/api/v1/interactions/"+in.ID+"/wait?timeout=60", nil)
		waited <- body
	}()

	// The prompt reconnects by itself; the person replies there.
	p.focusIn(in.ID, `textarea[aria-label="Your reply"]`)
	p.keys("Hi, Alice here: I'll sort out order 1432.")
	p.do(ctrlEnter())
	p.waitPromptText(in.ID, "You replied.")

	const reply = `"Hi, Alice here: I'll sort out order 1432."`
	for {
		_, msg, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("the contract channel ended before hitl:resolved: %v", err)
		}
		var m map[string]any
		_ = json.Unmarshal(msg, &m)
		if m["type"] == "hitl:resolved" && m["interaction_id"] == in.ID {
			if m["responded_by"] != "alice" || m["channel"] != "embed" {
				t.Errorf("hitl:resolved %v, want alice on embed", m)
			}
			break
		}
	}
	select {
	case body := <-waited:
		var w struct {
			Status string
			Result struct{ Value json.RawMessage }
		}
		_ = json.Unmarshal(body, &w)
		if w.Status != "answered" || string(w.Result.Value) != reply {
			t.Errorf("the wait returned %s", body)
		}
	case <-ctx.Done():
		t.Fatal("the wait did not return")
	}
	select {
	case body := <-hooks:
		if !strings.Contains(string(body), `"interaction.answered"`) || !strings.Contains(string(body), reply) || !strings.Contains(string(body), in.ID) {
			t.Errorf("webhook %s", body)
		}
	case <-ctx.Done():
		t.Fatal("no webhook")
	}
}
