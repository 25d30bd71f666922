package broker_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
)

// calls records the calls of a WaitFunc callback.
type calls struct {
	mu  sync.Mutex
	got []*hitl.Interaction
	n   atomic.Int32
}

func (c *calls) fn(in *hitl.Interaction) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, in)
	c.n.Add(1)
}

func TestWaitFuncCalledOnceWhenAnswered(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	in := mustCreate(t, b, approval())
	var c calls
	cur, stop, err := b.WaitFunc(context.Background(), in.ID, c.fn)
	if err != nil || stop == nil || cur.Status != hitl.StatusPending {
		t.Fatalf("WaitFunc: %v, stop %v, status %v; want pending and a stop", err, stop != nil, cur.Status)
	}
	if b.Waiting() != 1 {
		t.Fatalf("waiting %d, want 1", b.Waiting())
	}
	if _, err := b.Respond(context.Background(), in.ID, json.RawMessage(`true`)); err != nil {
		t.Fatal(err)
	}
	// Respond returns after waking the waiters, so the call was made.
	if c.n.Load() != 1 || c.got[0] == nil || c.got[0].Status != hitl.StatusAnswered {
		t.Fatalf("callback calls %d (%v), want one with the answered interaction", c.n.Load(), c.got)
	}
	if stop() {
		t.Error("stop after the call reported true, want false")
	}
	b.Close()
	if c.n.Load() != 1 || b.Waiting() != 0 {
		t.Errorf("callback calls %d, waiting %d; want 1, 0", c.n.Load(), b.Waiting())
	}
}

func TestWaitFuncStopped(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	in := mustCreate(t, b, approval())
	var c calls
	_, stop, err := b.WaitFunc(context.Background(), in.ID, c.fn)
	if err != nil || stop == nil {
		t.Fatalf("WaitFunc: %v", err)
	}
	if !stop() {
		t.Fatal("stop reported false before anything happened")
	}
	if b.Waiting() != 0 {
		t.Errorf("waiting %d after stop, want 0", b.Waiting())
	}
	if _, err := b.Respond(context.Background(), in.ID, json.RawMessage(`true`)); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if c.n.Load() != 0 {
		t.Errorf("a stopped callback was called %d times", c.n.Load())
	}
}

func TestWaitFuncAlreadyTerminalOrUnknown(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	in := mustCreate(t, b, approval())
	if _, err := b.Cancel(context.Background(), in.ID, ""); err != nil {
		t.Fatal(err)
	}
	var c calls
	got, stop, err := b.WaitFunc(context.Background(), in.ID, c.fn)
	if err != nil || stop != nil || got.Status != hitl.StatusCancelled {
		t.Errorf("terminal: %v, stop %v, status %v; want cancelled and no stop", err, stop != nil, got.Status)
	}
	if _, stop, err := b.WaitFunc(context.Background(), "nope", c.fn); !errors.Is(err, hitl.ErrNotFound) || stop != nil {
		t.Errorf("unknown: %v, stop %v; want not found and no stop", err, stop != nil)
	}
	if b.Waiting() != 0 || c.n.Load() != 0 {
		t.Errorf("waiting %d, calls %d; want 0, 0", b.Waiting(), c.n.Load())
	}
}

func TestWaitFuncReleasedOnClose(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	in := mustCreate(t, b, approval())
	var c calls
	if _, _, err := b.WaitFunc(context.Background(), in.ID, c.fn); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if c.n.Load() != 1 || c.got[0] != nil {
		t.Errorf("after close: calls %d (%v), want one with nil", c.n.Load(), c.got)
	}
	// After close, nothing is registered.
	if _, stop, err := b.WaitFunc(context.Background(), in.ID, c.fn); !errors.Is(err, broker.ErrClosed) || stop != nil {
		t.Errorf("WaitFunc after close: %v, stop %v; want ErrClosed and no stop", err, stop != nil)
	}
}
