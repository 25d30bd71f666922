package broker

import (
	"context"
	"sync"
	"time"

	"github.com/hitl-sh/hitl"
)

// readTimeout bounds the state read at the start of a wait.
const readTimeout = 10 * time.Second

// waiters wakes every agent blocked on an interaction at once when it
// becomes terminal. One entry per interaction being waited on, shared by
// all its waiters; no goroutine per interaction.
type waiters struct {
	mu sync.Mutex
	m  map[string]*waitEntry
}

type waitEntry struct {
	done chan struct{}     // closed on the terminal transition
	in   *hitl.Interaction // the terminal state, set before done is closed
	refs int
}

// add registers interest in id and returns the entry to wait on.
func (w *waiters) add(id string) *waitEntry {
	w.mu.Lock()
	defer w.mu.Unlock()
	e := w.m[id]
	if e == nil {
		e = &waitEntry{done: make(chan struct{})}
		w.m[id] = e
	}
	e.refs++
	return e
}

// remove drops one waiter's interest.
func (w *waiters) remove(id string, e *waitEntry) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e.refs--
	if e.refs == 0 && w.m[id] == e {
		delete(w.m, id)
	}
}

// wake releases every waiter of in, handing them its terminal state, and
// reports whether there were any.
func (w *waiters) wake(in *hitl.Interaction) bool {
	if in == nil || !in.Status.Terminal() {
		return false
	}
	w.mu.Lock()
	e := w.m[in.ID]
	if e != nil {
		delete(w.m, in.ID)
	}
	w.mu.Unlock()
	if e != nil {
		e.in = in
		close(e.done)
	}
	return e != nil
}

// count returns how many interactions have waiters (for tests and metrics).
func (w *waiters) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.m)
}

// Wait blocks until the interaction is terminal and returns it, if the
// caller may see it (else ENOTFOUND). An answer
// that arrived before the call is returned at once. When ctx ends first, it
// returns the interaction as it stands and ctx's error; when the broker
// shuts down, the same with ErrClosed.
func (b *Broker) Wait(ctx context.Context, id string) (*hitl.Interaction, error) {
	// Register before reading, so a transition between the read and the
	// select cannot be missed.
	e := b.waiters.add(id)
	defer b.waiters.remove(id, e)
	// The read ignores ctx's cancellation, so a caller whose time is already
	// up still learns the interaction's state. It runs on a short-lived
	// goroutine: the store's call stack is deep, and the caller's goroutine
	// (an HTTP handler's) would keep the stack it grew for as long as it
	// waits — 8 KiB more per open long-poll.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readTimeout)
	var (
		in   *hitl.Interaction
		err  error
		read = make(chan struct{})
	)
	go func() {
		defer close(read)
		in, err = b.visible(rctx, id)
	}()
	<-read
	cancel()
	if err != nil || in.Status.Terminal() {
		return in, err
	}
	select {
	case <-e.done:
		return e.in, nil
	case <-ctx.Done():
		return in, ctx.Err()
	case <-b.closed:
		return in, ErrClosed
	}
}

// Waiting returns how many interactions currently have a waiting agent.
func (b *Broker) Waiting() int { return b.waiters.count() }
