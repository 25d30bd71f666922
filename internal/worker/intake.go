package worker

import (
	"sync"

	"github.com/hitl-sh/hitl"
)

// MaxQueue bounds the items an Intake holds; beyond it the worker is asked
// to sweep the store instead, which has everything.
const MaxQueue = 10000

// Intake is what a channel's worker has yet to take up: the items a broker
// observer queued (it never blocks), and whether the worker should sweep
// the store for work it missed (at start-up, when the channel was just
// turned on, after an error, or when too much was queued). Adding wakes
// the worker. Make one with NewIntake.
type Intake[T any] struct {
	kick chan struct{}

	mu     sync.Mutex
	items  []T
	sweep  bool
	closed bool
}

// NewIntake returns an empty Intake.
func NewIntake[T any]() *Intake[T] {
	return &Intake[T]{kick: make(chan struct{}, 1)}
}

// Kicks is what wakes the worker, for Loop.
func (in *Intake[T]) Kicks() <-chan struct{} { return in.kick }

// Wake wakes the worker without queueing anything.
func (in *Intake[T]) Wake() { Wake(in.kick) }

// Add queues item and wakes the worker; past MaxQueue it asks for a sweep
// instead. After Close it does nothing.
func (in *Intake[T]) Add(item T) {
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return
	}
	if len(in.items) >= MaxQueue {
		in.sweep = true
	} else {
		in.items = append(in.items, item)
	}
	in.mu.Unlock()
	in.Wake()
}

// Sweep asks the worker to sweep the store on its next step. It does not
// wake the worker: the worker itself asks after an error, and others call
// Wake when they want the step now.
func (in *Intake[T]) Sweep() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.sweep = true
}

// Take returns what was queued and whether to sweep, and empties the
// Intake.
func (in *Intake[T]) Take() (items []T, sweep bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	items, sweep = in.items, in.sweep
	in.items, in.sweep = nil, false
	return items, sweep
}

// Close drops what is queued; Add does nothing from now on.
func (in *Intake[T]) Close() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.items, in.closed = nil, true
}

// CreatedPending returns the interaction ev created, if it is still
// pending: what a channel's observer queues for its worker.
func CreatedPending(ev *hitl.Event) (*hitl.Interaction, bool) {
	if ev.Type != hitl.EventCreated || ev.Interaction == nil || ev.Interaction.Status != hitl.StatusPending {
		return nil, false
	}
	return ev.Interaction, true
}
