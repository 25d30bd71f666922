package broker_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// TestWaitStarted: the signal is closed once an agent waits on the
// interaction, at once when one already does, and not before.
func TestWaitStarted(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	in := mustCreate(t, b, approval())
	other := mustCreate(t, b, approval())
	started := b.WaitStarted(in.ID)
	select {
	case <-started:
		t.Fatal("WaitStarted closed before any agent waits")
	default:
	}

	done := make(chan error, 1)
	go func() {
		_, err := b.Wait(context.Background(), in.ID)
		done <- err
	}()
	select {
	case <-started:
	case <-time.After(15 * time.Second):
		t.Fatal("WaitStarted not closed while an agent waits")
	}
	if got := b.Waiting(); got != 1 {
		t.Errorf("Waiting() = %d once the wait started, want 1", got)
	}
	select {
	case <-b.WaitStarted(in.ID):
	default:
		t.Error("WaitStarted for an interaction already waited on is not closed")
	}
	select {
	case <-b.WaitStarted(other.ID):
		t.Error("WaitStarted closed for an interaction no one waits on")
	default:
	}

	if _, err := b.Respond(context.Background(), in.ID, json.RawMessage(`true`)); err != nil {
		t.Fatalf("respond: %v", err)
	}
	if err := <-done; err != nil {
		t.Errorf("wait: %v", err)
	}
}
