package ask_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/ask"
	"github.com/hitl-sh/hitl/internal/hitltest"
)

// TestHandoff: Handoff returns at once with a pending handoff, and Reply
// waits for the person's reply, in process and over HTTP; one withdrawn
// is ErrCancelled.
func TestHandoff(t *testing.T) {
	t.Parallel()
	for _, e := range newEnvs(t) {
		t.Run(e.name, func(t *testing.T) {
			ctx := context.Background()
			id, err := ask.Handoff(ctx, e.agent, "Over to you: the customer asks for a manager.", &ask.Options{Context: "Chat so far: …", SessionID: "chat-5"})
			if err != nil {
				t.Fatalf("Handoff: %v", err)
			}
			in, err := e.agent.Get(ctx, id)
			if err != nil || in.Type != hitl.TypeHandoff || in.Status != hitl.StatusPending || in.SessionID != "chat-5" || in.Context != "Chat so far: …" {
				t.Fatalf("handoff %+v, %v; want it pending, with its session and context", in, err)
			}
			replies := make(chan string, 1)
			go func() {
				r, err := ask.Reply(ctx, e.agent, id)
				if err != nil {
					t.Errorf("Reply: %v", err)
				}
				replies <- r
			}()
			hitltest.Await(t, "the orchestrator to wait", e.broker.WaitStarted(id))
			if _, err := e.person.Respond(ctx, id, json.RawMessage(`"Hello, I'm the manager."`)); err != nil {
				t.Fatal(err)
			}
			if got := <-replies; got != "Hello, I'm the manager." {
				t.Errorf("Reply = %q, want the person's reply", got)
			}

			id, err = ask.Handoff(ctx, e.agent, "Over to you again", nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.person.Cancel(ctx, id, "customer left"); err != nil {
				t.Fatal(err)
			}
			if _, err := ask.Reply(ctx, e.agent, id); !errors.Is(err, hitl.ErrCancelled) {
				t.Errorf("Reply to a cancelled handoff: %v, want ErrCancelled", err)
			}
		})
	}
}
