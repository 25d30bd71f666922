package broker

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/hitl-sh/hitl"
)

// Escalation steps are durable rows of the store's NotificationStore, on
// channel hitl.ChannelEscalation: one per step of a pending interaction
// (its index as the round), due when the step is. One timer sleeps until
// the earliest; the rows due are claimed with a lease, so that each step
// fires once however many replicas share the store, and after a restart.
// A row whose interaction ended is skipped when it comes due.

const (
	// escalationLease is how long a claimed step stays with the replica
	// firing it; when that replica dies, another fires it after.
	escalationLease = 2 * time.Minute
	// escalationBatch is how many rows are scheduled or claimed per store
	// call.
	escalationBatch = 100
	// escalationGrace is how long after Start the first steps fire: the
	// channels (Slack, email) register their handlers once the broker
	// has started, and steps that came due while no process ran must
	// reach them too.
	escalationGrace = 2 * time.Second
)

// EscalationHandler tells the people of a fired escalation step on one
// channel (Slack, email). ev is the reminded or escalated event, with
// the interaction as the step left it (see hitl.ParseEscalationDetail).
// It is called once per step, on the replica that fired it, and must
// return promptly.
type EscalationHandler func(ctx context.Context, ev *hitl.Event)

// escalator fires the escalation steps of the broker's interactions.
type escalator struct {
	b     *Broker
	store hitl.NotificationStore // nil: the store keeps no rows, and steps never fire
	kick  chan struct{}

	mu       sync.Mutex
	handlers []EscalationHandler
}

func newEscalator(b *Broker) *escalator {
	ns, _ := b.store.(hitl.NotificationStore)
	return &escalator{b: b, store: ns, kick: make(chan struct{}, 1)}
}

// OnEscalation registers fn to be called for every escalation step this
// broker fires (see EscalationHandler). Steps fire from a few seconds
// after Start on, so that handlers registered right after it miss none.
func (b *Broker) OnEscalation(fn EscalationHandler) {
	b.escalator.mu.Lock()
	defer b.escalator.mu.Unlock()
	b.escalator.handlers = append(b.escalator.handlers, fn)
}

// wake makes the timer look at the store again (a new step was
// scheduled, here or by another replica).
func (x *escalator) wake() {
	select {
	case x.kick <- struct{}{}:
	default:
	}
}

// created schedules the steps of a new interaction and wakes the timer.
// When this fails, the sweep of the next start schedules them.
func (x *escalator) created(ctx context.Context, in *hitl.Interaction) {
	if x.store == nil || len(in.Escalation) == 0 || in.Status != hitl.StatusPending {
		return
	}
	if _, err := x.store.ScheduleNotifications(ctx, stepRows(in, x.b.now())); err != nil {
		x.b.log.Error("schedule escalation steps", "interaction_id", in.ID, "error", err)
		return
	}
	x.wake()
}

// stepRows returns the rows of in's escalation steps, or, with none, one
// skipped row that says so (so that a sweep does not take it up again).
func stepRows(in *hitl.Interaction, now time.Time) []*hitl.Notification {
	if len(in.Escalation) == 0 || in.Status != hitl.StatusPending {
		return []*hitl.Notification{{ID: uuid.NewString(), InteractionID: in.ID, Channel: hitl.ChannelEscalation,
			Round: -1, State: hitl.NotificationSkipped, CreatedAt: now}}
	}
	out := make([]*hitl.Notification, 0, len(in.Escalation))
	for i, s := range in.Escalation {
		out = append(out, &hitl.Notification{ID: uuid.NewString(), InteractionID: in.ID, Channel: hitl.ChannelEscalation,
			Round: i, State: hitl.NotificationScheduled, DueAt: s.Due(in.CreatedAt), CreatedAt: now})
	}
	return out
}

// sweep schedules the steps of every pending interaction that has no
// rows yet (created while no process was there to schedule them). Steps
// are kept with the workflow, so only interactions with one are read.
func (x *escalator) sweep(ctx context.Context) error {
	f := hitl.UnnotifiedFilter{Channel: hitl.ChannelEscalation, Workflow: true, Limit: escalationBatch}
	for {
		list, err := x.store.UnnotifiedInteractions(ctx, f)
		if err != nil {
			return err
		}
		var rows []*hitl.Notification
		for _, in := range list {
			rows = append(rows, stepRows(in, x.b.now())...)
		}
		if _, err := x.store.ScheduleNotifications(ctx, rows); err != nil {
			return err
		}
		if len(list) < escalationBatch {
			return nil
		}
		f.After = list[len(list)-1]
	}
}

// run is the timer's loop.
func (x *escalator) run(ctx context.Context) {
	grace := time.NewTimer(escalationGrace)
	select {
	case <-grace.C:
	case <-ctx.Done():
		grace.Stop()
		return
	}
	if err := x.sweep(ctx); err != nil && ctx.Err() == nil {
		x.b.log.Error("schedule the escalation steps of pending interactions", "error", err)
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		timer.Reset(x.step(ctx))
		select {
		case <-timer.C:
		case <-x.kick:
			timer.Stop()
		case <-ctx.Done():
			return
		}
	}
}

// step fires what is due and returns how long to sleep.
func (x *escalator) step(ctx context.Context) time.Duration {
	ctx, cancel := context.WithTimeout(ctx, escalationLease)
	defer cancel()
	for {
		now := x.b.now()
		rows, err := x.store.ClaimNotifications(ctx, hitl.ChannelEscalation, now, now.Add(escalationLease), escalationBatch)
		if err != nil {
			if ctx.Err() == nil {
				x.b.log.Error("claim due escalation steps", "error", err)
			}
			return retryAfterError
		}
		for _, n := range rows {
			x.fire(ctx, n)
		}
		if len(rows) < escalationBatch {
			break
		}
	}
	next, ok, err := x.store.NextNotificationDue(ctx, hitl.ChannelEscalation)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			x.b.log.Error("read the next escalation step due", "error", err)
		}
		return retryAfterError
	case !ok:
		return idleRecheck
	}
	return min(max(next.Sub(x.b.now()), skippedRecheck), idleRecheck)
}

// fire fires one claimed step, unless its interaction ended, and marks
// its row done.
func (x *escalator) fire(ctx context.Context, n *hitl.Notification) {
	state := hitl.NotificationSkipped
	if in := n.Interaction; in != nil && in.Status == hitl.StatusPending {
		now := x.b.now()
		rowIDs := [2]string{uuid.NewString(), uuid.NewString()}
		_, ev, err := x.b.store.ChangePending(ctx, n.InteractionID, now, func(in *hitl.Interaction) (*hitl.Change, error) {
			ev, err := in.ApplyEscalation(n.Round, now)
			if err != nil || ev == nil {
				return &hitl.Change{Event: ev}, err
			}
			return &hitl.Change{Event: ev, Schedule: stepDeliveries(in, ev, rowIDs, now)}, nil
		})
		switch {
		case errors.Is(err, hitl.ErrNotPending), errors.Is(err, hitl.ErrPastDeadline):
		case err != nil:
			x.b.log.Error("fire an escalation step", "interaction_id", n.InteractionID, "step", n.Round, "error", err)
			return // the lease runs out and the step is tried again
		default:
			state = hitl.NotificationSent
			if ev != nil {
				x.fired(ctx, ev)
			}
		}
	}
	done := *n
	done.State, done.DueAt, done.Attempts = state, time.Time{}, 0
	if _, err := x.store.UpdateNotification(ctx, &done, n.State, n.Attempts); err != nil {
		x.b.log.Error("mark an escalation step done", "interaction_id", n.InteractionID, "step", n.Round, "error", err)
	}
}

// stepDeliveries returns the durable rows that deliver the fired step ev
// of in, written with the step's event so that a crash between the two
// loses nothing: the Slack thread reply (hitl.ChannelSlackReminder) when
// the step tells Slack and in has not turned Slack off, and the round of
// mails (hitl.ChannelEmailReminder) when it tells email and in has not
// turned email off, each with the step's index as its round and an id of
// ids. The channels claim them; where one does not run they wait, and go
// with the interaction when it is purged.
func stepDeliveries(in *hitl.Interaction, ev *hitl.Event, ids [2]string, now time.Time) []*hitl.Notification {
	d, err := hitl.ParseEscalationDetail(ev)
	if err != nil {
		return nil
	}
	var rows []*hitl.Notification
	if d.Tells(hitl.ChannelSlack) && !in.SlackOff() {
		rows = append(rows, &hitl.Notification{ID: ids[0], InteractionID: in.ID, Channel: hitl.ChannelSlackReminder, Round: d.Step,
			State: hitl.NotificationScheduled, DueAt: now, CreatedAt: now})
	}
	if d.Tells(hitl.ChannelEmail) && !in.EmailOff() {
		rows = append(rows, &hitl.Notification{ID: ids[1], InteractionID: in.ID, Channel: hitl.ChannelEmailReminder, Round: d.Step,
			State: hitl.NotificationScheduled, DueAt: now, CreatedAt: now})
	}
	return rows
}

// fired streams the event of a fired step and hands it to the channels.
func (x *escalator) fired(ctx context.Context, ev *hitl.Event) {
	x.b.changed(ev)
	x.b.log.Info("escalation step fired", "interaction_id", ev.InteractionID, "event", string(ev.Type))
	x.mu.Lock()
	hs := append([]EscalationHandler(nil), x.handlers...)
	x.mu.Unlock()
	for _, h := range hs {
		h(ctx, ev)
	}
}
