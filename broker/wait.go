package broker

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
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
	// started holds the channels WaitStarted returned, by interaction,
	// until an agent waits on it.
	started map[string][]chan struct{}
}

type waitEntry struct {
	done  chan struct{}     // closed on the terminal transition
	in    *hitl.Interaction // the terminal state, set before done is closed
	refs  int
	funcs []*waitFunc // WaitFunc's callers
}

// waitFunc is a function waiting on an entry (WaitFunc); fired makes sure
// it is called at most once, or not at all once stopped.
type waitFunc struct {
	fn    func(*hitl.Interaction)
	fired atomic.Bool
}

// add registers interest in id and returns the entry to wait on.
func (w *waiters) add(id string) *waitEntry {
	w.mu.Lock()
	defer w.mu.Unlock()
	e := w.m[id]
	if e == nil {
		e = &waitEntry{done: make(chan struct{})}
		w.m[id] = e
		for _, ch := range w.started[id] {
			close(ch)
		}
		delete(w.started, id)
	}
	e.refs++
	return e
}

// waitStarted returns a channel closed once id has a waiter.
func (w *waiters) waitStarted(id string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch := make(chan struct{})
	if w.m[id] != nil {
		close(ch)
		return ch
	}
	if w.started == nil {
		w.started = make(map[string][]chan struct{})
	}
	w.started[id] = append(w.started[id], ch)
	return ch
}

// addFunc registers f's interest in id.
func (w *waiters) addFunc(id string, f *waitFunc) *waitEntry {
	e := w.add(id)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m[id] == e {
		e.funcs = append(e.funcs, f)
	}
	return e
}

// stop withdraws f and reports whether it will not be called (false: it
// has been called, or is being called).
func (w *waiters) stop(id string, e *waitEntry, f *waitFunc) bool {
	stopped := f.fired.CompareAndSwap(false, true)
	w.mu.Lock()
	if w.m[id] == e {
		// Not woken: the entry's list is this set's to change.
		if i := slices.Index(e.funcs, f); i >= 0 {
			e.funcs = slices.Delete(e.funcs, i, i+1)
		}
	}
	w.mu.Unlock()
	w.remove(id, e)
	return stopped
}

// release calls every waiting function with nil: the broker closed.
func (w *waiters) release() {
	w.mu.Lock()
	var fs []*waitFunc
	for _, e := range w.m {
		fs = append(fs, e.funcs...)
		e.funcs = nil
	}
	w.mu.Unlock()
	for _, f := range fs {
		if f.fired.CompareAndSwap(false, true) {
			f.fn(nil)
		}
	}
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
	var fs []*waitFunc
	if e != nil {
		delete(w.m, in.ID)
		fs = e.funcs // no longer changed: the entry left the set
	}
	w.mu.Unlock()
	if e == nil {
		return false
	}
	e.in = in
	close(e.done)
	for _, f := range fs {
		if f.fired.CompareAndSwap(false, true) {
			f.fn(in)
		}
	}
	return true
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
	in, err := b.wait(ctx, id)
	return b.receipted(in), err
}

// wait is Wait without the receipt.
func (b *Broker) wait(ctx context.Context, id string) (*hitl.Interaction, error) {
	// Register before reading, so a transition between the read and the
	// select cannot be missed.
	e := b.waiters.add(id)
	defer b.waiters.remove(id, e)
	in, err := b.waitState(ctx, id)
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

// waitState returns the interaction a wait starts from, if the caller may
// see it. Registered as a waiter first, the caller is woken by any change
// this state does not show yet: recent learns of a change before waiters
// are woken.
//
// A read from the store ignores ctx's cancellation, so a caller whose time
// is already up still learns the interaction's state. It runs on a
// short-lived goroutine: the store's call stack is deep, and the caller's
// goroutine (an HTTP handler's) would keep the stack it grew for as long as
// it waits — 8 KiB more per open long-poll.
func (b *Broker) waitState(ctx context.Context, id string) (*hitl.Interaction, error) {
	if in := b.recent.get(id); in != nil {
		return seeable(ctx, id, in, nil)
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readTimeout)
	defer cancel()
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
	return in, err
}

// WaitFunc is Wait for a caller that does not block a goroutine while it
// waits (a parked long-poll). It returns at once.
//
// When the interaction is already terminal, or cannot be read or seen, it
// returns it (or the error) and a nil stop; fn is never called. Otherwise
// it returns the interaction as it stands and a stop function, and fn is
// called once: with the terminal interaction when it becomes terminal, or
// with nil when the broker closes. fn runs on the goroutine that made the
// change and must not block. stop withdraws fn; it reports false when fn
// has been called or is being called.
func (b *Broker) WaitFunc(ctx context.Context, id string, fn func(*hitl.Interaction)) (*hitl.Interaction, func() bool, error) {
	in, stop, err := b.waitFunc(ctx, id, func(in *hitl.Interaction) { fn(b.receipted(in)) })
	return b.receipted(in), stop, err
}

// waitFunc is WaitFunc without the receipt.
func (b *Broker) waitFunc(ctx context.Context, id string, fn func(*hitl.Interaction)) (*hitl.Interaction, func() bool, error) {
	f := &waitFunc{fn: fn}
	// Register before reading, as Wait does.
	e := b.waiters.addFunc(id, f)
	stop := func() bool { return b.waiters.stop(id, e, f) }
	in, err := b.visibleRecent(ctx, id)
	closed := false
	select {
	case <-b.closed:
		closed = true
	default:
	}
	if err != nil || in.Status.Terminal() || closed {
		if stop() {
			if err == nil && closed {
				err = ErrClosed
			}
			return in, nil, err
		}
		// fn has been called, or is being called: it answers.
	}
	return in, stop, nil
}

// Waiting returns how many interactions currently have a waiting agent.
func (b *Broker) Waiting() int { return b.waiters.count() }

// WaitStarted returns a channel that is closed once an agent waits on
// interaction id through this broker (Wait or WaitFunc), at once if one
// already does. It is a signal for tests and tools that must act only
// while an agent is blocked (answer it, stop the server under it), in
// place of polling Waiting. The channel is kept until an agent waits on
// id: ask only about interactions that will be waited on.
func (b *Broker) WaitStarted(id string) <-chan struct{} { return b.waiters.waitStarted(id) }
