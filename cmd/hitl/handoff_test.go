package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/turns"
)

// TestHandoff runs "hitl handoff" against a real "hitl serve": without
// --wait it prints the id and exits at once, the handoff pending; with
// --wait it prints the person's reply.
func TestHandoff(t *testing.T) {
	turns.Parallel(t)
	srv := startServer(t)
	c := srv.client(t)
	ctx := context.Background()

	stdout, stderr, code := hitlRun(t, "handoff", "--server", srv.URL, "--session", "chat-3", "--context", "Order **1432**", "--agent", "support-bot",
		"The", "customer", "wants", "a", "person.")
	if code != exitAnswered {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, stderr)
	}
	id := strings.TrimSpace(stdout)
	in, err := c.Get(ctx, id)
	if err != nil {
		t.Fatalf("get the printed id %q: %v", id, err)
	}
	if in.Type != hitl.TypeHandoff || in.Status != hitl.StatusPending || in.Question != "The customer wants a person." ||
		in.SessionID != "chat-3" || in.Context != "Order **1432**" || in.SourceAgent != "support-bot" || in.CreatedVia != hitl.ChannelCLI {
		t.Errorf("created %+v; want a pending handoff with the flags' fields, via cli", in)
	}

	p := start(t, "handoff", "--server", srv.URL, "--wait", "--id", "handoff-wait", "Please take over")
	in = pendingByKey(t, c, "handoff-wait")
	if _, err := c.Respond(ctx, in.ID, json.RawMessage(`"I'm here. What do you need?"`)); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t); code != exitAnswered {
		t.Fatalf("--wait: exit %d, want 0; stderr:\n%s", code, p.stderr)
	}
	if got := p.stdout.String(); got != "I'm here. What do you need?\n" {
		t.Errorf("--wait printed %q, want the reply", got)
	}
	if !strings.Contains(p.stderr.String(), in.ID) {
		t.Errorf("--wait stderr %q, want the id", p.stderr)
	}

	// Cancelled while waited for: exit 3.
	p = start(t, "handoff", "--server", srv.URL, "--wait", "--id", "handoff-cancel", "Please take over")
	in = pendingByKey(t, c, "handoff-cancel")
	if _, err := c.Cancel(ctx, in.ID, "resolved by the bot"); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t); code != exitCancelled {
		t.Errorf("cancelled: exit %d, want %d; stderr:\n%s", code, exitCancelled, p.stderr)
	}

	if _, _, code := hitlRun(t, "handoff", "--server", srv.URL); code != exitError {
		t.Errorf("without a message: exit %d, want %d", code, exitError)
	}
}
