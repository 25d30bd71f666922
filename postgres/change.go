package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/jackc/pgx/v5"
)

var (
	// sqlLockPending reads an interaction and locks its row until the
	// transaction ends: changes of one interaction queue on it, on every
	// replica, as its compare-and-sets do.
	sqlLockPending = `SELECT ` + cols + ` FROM interactions WHERE id = $1 FOR UPDATE`

	sqlSetWorkflow = `UPDATE interactions SET workflow = $2, targets = $3 WHERE id = $1`

	// sqlInsertEvent appends an event and notifies the replicas of it
	// ($7 the NOTIFY channel) when the transaction commits.
	sqlInsertEvent = `WITH ev AS (
			INSERT INTO events (type, interaction_id, at, actor, channel, detail)
			VALUES ($1, $2, $3, $4, $5, $6)
			RETURNING seq
		)
		SELECT seq, pg_notify($7, seq::text) FROM ev`
)

// ChangePending reads the pending interaction id with its row locked, lets
// fn change its votes or claim, and writes the change, its event and,
// when fn decided the interaction, its resolution and event, in one
// transaction (see hitl.ChangeStore). Changes, answers and deadlines of
// one interaction queue on its row lock, on every replica, so each fn
// sees every change committed before it. A zero at means now.
func (s *Store) ChangePending(ctx context.Context, id string, at time.Time, fn hitl.PendingChange) (*hitl.Interaction, *hitl.Event, error) {
	if at.IsZero() {
		at = s.now()
	}
	at = truncate(at)
	var (
		out   *hitl.Interaction
		first *hitl.Event
	)
	err := s.with(ctx, func(c *pgx.Conn) error {
		return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			in, err := scanInteraction(tx.QueryRow(ctx, sqlLockPending, id))
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				return hitl.Errorf(hitl.ENOTFOUND, "interaction %q not found", id)
			case err != nil:
				return fmt.Errorf("read: %w", err)
			}
			out = in
			if in.Status != hitl.StatusPending {
				return hitl.ErrNotPending
			}
			if in.Expired(at) {
				return hitl.ErrPastDeadline
			}
			ch, err := fn(in)
			if err != nil {
				return err
			}
			first, out, err = s.applyChange(ctx, tx, in, ch, at)
			return err
		})
	})
	switch {
	case errors.Is(err, hitl.ErrNotPending), errors.Is(err, hitl.ErrPastDeadline), errors.Is(err, hitl.ErrAlreadyVoted):
		return out, nil, err
	case err == nil:
		return out, first, nil
	case hitl.ErrorCode(err) != hitl.EINTERNAL:
		return out, nil, err
	}
	return nil, nil, fmt.Errorf("change interaction %s: %w", id, badText(err))
}

// applyChange writes in's workflow and targets (an escalation widens
// them) as fn left them, ch's event, ch's resolution with its event and
// ch's rows to schedule, and returns the first event (the others chained
// by Next) and the interaction as it now is.
func (s *Store) applyChange(ctx context.Context, tx pgx.Tx, in *hitl.Interaction, ch *hitl.Change, at time.Time) (*hitl.Event, *hitl.Interaction, error) {
	targets, err := marshal(in.Targets, in.Targets == nil, "targets")
	if err != nil {
		return nil, nil, err
	}
	if _, err := tx.Exec(ctx, sqlSetWorkflow, in.ID, text(in.WorkflowJSON()), targets); err != nil {
		return nil, nil, fmt.Errorf("update workflow: %w", err)
	}
	for _, m := range ch.Schedule {
		if _, err := tx.Exec(ctx, sqlInsertNotification, s.notificationArgs(m)...); err != nil {
			return nil, nil, fmt.Errorf("schedule notification of interaction %s: %w", m.InteractionID, err)
		}
	}
	out := in
	var evs []*hitl.Event
	if ch.Event != nil {
		ev := *ch.Event
		ev.InteractionID, ev.At = in.ID, truncate(ev.At)
		if ev.At.IsZero() {
			ev.At = at
		}
		err := tx.QueryRow(ctx, sqlInsertEvent, string(ev.Type), in.ID, ev.At, ev.Actor, ev.Channel, ev.Detail, s.channel).Scan(&ev.Seq, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("append %s event: %w", ev.Type, err)
		}
		evs = append(evs, &ev)
	}
	if ch.Resolve != nil {
		t := *ch.Resolve
		if t.At.IsZero() {
			t.At = at
		}
		t.At = truncate(t.At)
		ev := &hitl.Event{Type: t.EventType(), InteractionID: in.ID, At: t.At, Actor: t.By, Channel: t.Via, Detail: t.EventDetail()}
		if err := tx.QueryRow(ctx, sqlResolveFrom, s.resolveArgs(in.ID, t)...).Scan(&ev.Seq, nil); err != nil {
			return nil, nil, fmt.Errorf("resolve: %w", err)
		}
		out = t.Applied(in)
		evs = append(evs, ev)
		if t.Rule != nil {
			// An answer that makes a rule ("approve, and always allow this").
			r, err := s.newRule(t.Rule, at)
			if err != nil {
				return nil, nil, err
			}
			r.InteractionID = in.ID
			rev, err := s.insertRule(ctx, tx, r, t.Via, out)
			if err != nil {
				return nil, nil, err
			}
			ev.Next = rev
		}
	}
	for i, ev := range evs {
		ev.Interaction = out
		if i > 0 {
			evs[i-1].Next = ev
		}
	}
	if len(evs) == 0 {
		return nil, out, nil
	}
	return evs[0], out, nil
}
