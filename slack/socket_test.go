package slack

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/slackfake"
)

// socketConfig is a stored configuration: enabled over Socket Mode,
// posting at once.
func socketConfig() *hitl.SlackConfig {
	c := httpConfig()
	c.SigningSecret, c.AppToken = "", testAppToken
	return c
}

func TestSocketModeAnswers(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: socketConfig()})
	withUsers(t, h)
	h.fake.WaitConnected(1, testAppToken)
	if v, err := h.s.Config(context.Background()); err != nil || v.Transport != TransportSocketMode {
		t.Fatalf("config: transport %q, %v; want socket_mode", v.Transport, err)
	}

	approval := h.ask(hitl.CreateRequest{Type: hitl.TypeApproval})
	post, _ := h.waitPosted(approval)
	h.fake.Send(slackfake.Envelope("E1", "interactive", click(slackAlice, post, actionIDs(t, post)["Reject"], nil)))
	h.fake.WaitAck("E1")
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
	h.fake.Send(slackfake.Envelope("E2", "events_api", ev))
	h.fake.Send(slackfake.Envelope("E3", "events_api", ev))
	h.fake.WaitAck("E2")
	h.fake.WaitAck("E3")
	wantResult(t, h.waitEnded(text.ID), `"v1.2.3"`, "alice")
	h.waitUpdated(text)
	if n := len(h.fake.Calls("chat.postEphemeral")); n != 0 {
		t.Errorf("a retried event was handled twice: %d ephemeral messages", n)
	}

	// A modal's submission is answered in the acknowledgement: errors
	// keep it open.
	form := h.ask(hitl.CreateRequest{Type: hitl.TypeForm, FormSchema: json.RawMessage(testSchema)})
	post, _ = h.waitPosted(form)
	h.fake.Send(slackfake.Envelope("E4", "interactive", click(slackAlice, post, actionIDs(t, post)["Fill in"], nil)))
	view := h.fake.WaitFor("views.open", 1, nil)[0].Body["view"].(map[string]any)
	h.fake.Send(slackfake.Envelope("E5", "interactive", map[string]any{
		"type": "view_submission", "user": map[string]any{"id": slackAlice},
		"view": map[string]any{"id": "V1", "callback_id": view["callback_id"], "private_metadata": view["private_metadata"],
			"state": map[string]any{"values": map[string]any{"f1": map[string]any{valueAction: map[string]any{"type": "number_input", "value": "x"}}}}},
	}))
	if got := string(h.fake.WaitAck("E5")); !strings.Contains(got, `"response_action":"errors"`) || !strings.Contains(got, "Enter a number") {
		t.Errorf("ack of an invalid submission: got %s, want errors", got)
	}
}

func TestSocketModeReconfigure(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{config: socketConfig()})
	h.fake.WaitConnected(1, testAppToken)
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
	h.fake.AcceptToken(next)
	if _, err := h.s.SetConfig(ctx, ConfigUpdate{AppToken: new(next)}); err != nil {
		t.Fatalf("SetConfig: %v", err)
	}
	h.fake.WaitConnected(2, next)

	// Several changes in a row still end with one connection, the last
	// one's (a run stopped before it connected opens none).
	for _, tok := range []string{testAppToken, next, testAppToken} {
		if _, err := h.s.SetConfig(ctx, ConfigUpdate{AppToken: new(tok)}); err != nil {
			t.Fatalf("SetConfig: %v", err)
		}
	}
	h.fake.WaitConnected(-1, testAppToken)

	// Over HTTP instead: no connection at all.
	if _, err := h.s.SetConfig(ctx, ConfigUpdate{SigningSecret: new(testSecret)}); err != nil {
		t.Fatalf("SetConfig: %v", err)
	}
	h.fake.WaitConnected(-1)
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
