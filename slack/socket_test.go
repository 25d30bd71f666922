package slack

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
)

// socketConfig is a stored configuration: enabled over Socket Mode,
// posting at once.
func socketConfig() *hitl.SlackConfig {
	c := httpConfig()
	c.SigningSecret, c.AppToken = "", testAppToken
	return c
}

// connected waits until exactly the given app tokens have a connection
// open, and opened connections were made in all (-1: any number).
func connected(f *fakeSlack, opened int, tokens ...string) {
	f.t.Helper()
	f.waitSocket("connections "+strings.Join(tokens, ","), func(open []string, n int, _ []json.RawMessage) bool {
		slices.Sort(open)
		slices.Sort(tokens)
		return slices.Equal(open, tokens) && (opened < 0 || n == opened)
	})
}

// envelope wraps a payload as Socket Mode does.
func envelope(id, typ string, payload any) map[string]any {
	return map[string]any{"envelope_id": id, "type": typ, "payload": payload, "accepts_response_payload": typ == "interactive"}
}

// acked waits for the acknowledgement of envelope id and returns its
// payload.
func acked(f *fakeSlack, id string) json.RawMessage {
	f.t.Helper()
	var payload json.RawMessage
	f.waitSocket("the ack of "+id, func(_ []string, _ int, acks []json.RawMessage) bool {
		for _, a := range acks {
			var ack struct {
				EnvelopeID string          `json:"envelope_id"`
				Payload    json.RawMessage `json:"payload"`
			}
			if json.Unmarshal(a, &ack) == nil && ack.EnvelopeID == id {
				payload = ack.Payload
				return true
			}
		}
		return false
	})
	return payload
}

func TestSocketModeAnswers(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: socketConfig()})
	withUsers(t, h)
	connected(h.fake, 1, testAppToken)
	if v, err := h.s.Config(context.Background()); err != nil || v.Transport != TransportSocketMode {
		t.Fatalf("config: transport %q, %v; want socket_mode", v.Transport, err)
	}

	approval := h.ask(hitl.CreateRequest{Type: hitl.TypeApproval})
	post, _ := h.waitPosted(approval)
	h.fake.send(envelope("E1", "interactive", click(slackAlice, post, actionIDs(t, post)["Reject"], nil)))
	acked(h.fake, "E1")
	wantResult(t, h.waitEnded(approval.ID), "false", "alice")
	wantNoActions(t, h.waitUpdated(approval))

	// A thread reply, then Slack's retry of the same event: one answer,
	// and no "too late" for the retry.
	text := h.ask(hitl.CreateRequest{Question: "Which tag?"})
	_, row := h.waitPosted(text)
	var ev map[string]any
	if err := json.Unmarshal(reply("EvSock1", slackAlice, testChannel, row.TS, "v1.2.3"), &ev); err != nil {
		t.Fatal(err)
	}
	h.fake.send(envelope("E2", "events_api", ev))
	h.fake.send(envelope("E3", "events_api", ev))
	acked(h.fake, "E2")
	acked(h.fake, "E3")
	wantResult(t, h.waitEnded(text.ID), `"v1.2.3"`, "alice")
	h.waitUpdated(text)
	if n := len(h.fake.called("chat.postEphemeral")); n != 0 {
		t.Errorf("a retried event was handled twice: %d ephemeral messages", n)
	}

	// A modal's submission is answered in the acknowledgement: errors
	// keep it open.
	form := h.ask(hitl.CreateRequest{Type: hitl.TypeForm, FormSchema: json.RawMessage(testSchema)})
	post, _ = h.waitPosted(form)
	h.fake.send(envelope("E4", "interactive", click(slackAlice, post, actionIDs(t, post)["Fill in"], nil)))
	view := h.fake.waitFor("views.open", 1, nil)[0].body["view"].(map[string]any)
	h.fake.send(envelope("E5", "interactive", map[string]any{
		"type": "view_submission", "user": map[string]any{"id": slackAlice},
		"view": map[string]any{"id": "V1", "callback_id": view["callback_id"], "private_metadata": view["private_metadata"],
			"state": map[string]any{"values": map[string]any{"f1": map[string]any{valueAction: map[string]any{"type": "number_input", "value": "x"}}}}},
	}))
	if got := string(acked(h.fake, "E5")); !strings.Contains(got, `"response_action":"errors"`) || !strings.Contains(got, "Enter a number") {
		t.Errorf("ack of an invalid submission: got %s, want errors", got)
	}
}

func TestSocketModeReconfigure(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: socketConfig()})
	connected(h.fake, 1, testAppToken)
	ctx := context.Background()

	// Saving the same settings keeps the connection.
	first := h.socketRun()
	if _, err := h.s.SetConfig(ctx, ConfigUpdate{DelaySeconds: new(5)}); err != nil {
		t.Fatalf("SetConfig: %v", err)
	}
	if h.socketRun() != first {
		t.Errorf("a change that does not touch the tokens reconnected")
	}

	// A new app token: the old connection is closed before the new one
	// opens, so exactly one is left.
	const next = "xapp-1-A111-4444-secondtokenxx"
	h.fake.mu.Lock()
	h.fake.tokens[next] = true
	h.fake.mu.Unlock()
	if _, err := h.s.SetConfig(ctx, ConfigUpdate{AppToken: new(next)}); err != nil {
		t.Fatalf("SetConfig: %v", err)
	}
	connected(h.fake, 2, next)

	// Several changes in a row still end with one connection, the last
	// one's (a run stopped before it connected opens none).
	for _, tok := range []string{testAppToken, next, testAppToken} {
		if _, err := h.s.SetConfig(ctx, ConfigUpdate{AppToken: new(tok)}); err != nil {
			t.Fatalf("SetConfig: %v", err)
		}
	}
	connected(h.fake, -1, testAppToken)

	// Over HTTP instead: no connection at all.
	if _, err := h.s.SetConfig(ctx, ConfigUpdate{SigningSecret: new(testSecret)}); err != nil {
		t.Fatalf("SetConfig: %v", err)
	}
	connected(h.fake, -1)
	if h.s.view(Config{}).Connected {
		t.Errorf("view says connected after Socket Mode was stopped")
	}
}

// socketRun returns the channel's current Socket Mode run.
func (h *harness) socketRun() *socketRun {
	h.s.applyMu.Lock()
	defer h.s.applyMu.Unlock()
	return h.s.socket
}
