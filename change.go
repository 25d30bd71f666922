package hitl

import (
	"context"
	"time"
)

// Change is what a PendingChange did to a pending interaction: the event
// that records it (voted, claimed, released), and the transition out of
// pending when it decided the interaction.
type Change struct {
	Event   *Event
	Resolve *Transition
	// Schedule are durable rows (of a NotificationStore) that deliver
	// what the change did, such as a fired escalation step's replies:
	// written in the change's transaction, so that they exist exactly
	// when its event does. A row whose key exists is left as it is, as
	// ScheduleNotifications leaves it.
	Schedule []*Notification
}

// PendingChange changes a pending interaction in place (its votes, its
// claim) and says what it did; an error leaves the store unchanged. It
// runs inside the store's transaction, with the interaction locked, so it
// must only compute: no I/O, no waiting.
type PendingChange func(in *Interaction) (*Change, error)

// ChangeStore is the store side of votes and claims: a read, a change
// and a write of one pending interaction, atomic against every other
// change, answer and deadline of it, on any number of replicas.
type ChangeStore interface {
	// ChangePending reads the interaction id, and when it is pending and
	// its deadline is after at, calls fn with it and writes what fn
	// changed of its workflow (WorkflowJSON), fn's event, and, when fn
	// decided it, the transition with its event (the returned event's
	// Next; the returned event is that transition's when fn has none).
	// It returns the interaction as fn left it (resolved or not). When
	// the interaction is not pending it returns it with ErrNotPending,
	// past its deadline with ErrPastDeadline, and ENOTFOUND when it does
	// not exist; fn's error is returned as it is, with the interaction.
	ChangePending(ctx context.Context, id string, at time.Time, fn PendingChange) (*Interaction, *Event, error)
}
