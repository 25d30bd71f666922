package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/hitl-sh/hitl"
)

const sqlSetWorkflow = `UPDATE interactions SET workflow = ?, targets = ? WHERE id = ? AND status = 'pending'`

// ChangePending reads the pending interaction id, lets fn change its
// votes or claim, and writes the change, its event and, when fn decided
// the interaction, its resolution and event, in one write transaction
// (see hitl.ChangeStore). Writes are serialised on the one writer
// connection, so no other change, answer or deadline of id comes between
// the read and the write. A zero at means now.
func (s *Store) ChangePending(ctx context.Context, id string, at time.Time, fn hitl.PendingChange) (*hitl.Interaction, *hitl.Event, error) {
	if at.IsZero() {
		at = s.now()
	}
	at = truncate(at)
	var (
		out   *hitl.Interaction
		first *hitl.Event
	)
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		out, first = nil, nil
		in, err := scanInteraction(tx.StmtContext(ctx, s.st.interactionW).QueryRowContext(ctx, id))
		switch {
		case errors.Is(err, sql.ErrNoRows):
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
	switch {
	case errors.Is(err, hitl.ErrNotPending), errors.Is(err, hitl.ErrPastDeadline), errors.Is(err, hitl.ErrAlreadyVoted):
		return out, nil, err
	case err == nil:
		return out, first, nil
	case hitl.ErrorCode(err) != hitl.EINTERNAL:
		return out, nil, err
	}
	return nil, nil, fmt.Errorf("change interaction %s: %w", id, err)
}

// applyChange writes in's workflow and targets (an escalation widens
// them) as fn left them, ch's event, ch's resolution with its event and
// ch's rows to schedule, and returns the first event (the others chained
// by Next) and the interaction as it now is.
func (s *Store) applyChange(ctx context.Context, tx *sql.Tx, in *hitl.Interaction, ch *hitl.Change, at time.Time) (*hitl.Event, *hitl.Interaction, error) {
	targets, err := marshal(in.Targets, in.Targets == nil, "targets")
	if err != nil {
		return nil, nil, err
	}
	if _, err := tx.ExecContext(ctx, sqlSetWorkflow, text(in.WorkflowJSON()), targets, in.ID); err != nil {
		return nil, nil, fmt.Errorf("update workflow: %w", err)
	}
	if _, err := insertNotifications(ctx, tx, ch.Schedule, s.now()); err != nil {
		return nil, nil, fmt.Errorf("schedule notifications: %w", err)
	}
	out := in
	var evs []*hitl.Event
	if ch.Event != nil {
		ev := *ch.Event
		ev.InteractionID, ev.At = in.ID, truncate(ev.At)
		if ev.At.IsZero() {
			ev.At = at
		}
		evs = append(evs, &ev)
	}
	if ch.Resolve != nil {
		t := *ch.Resolve
		if t.At.IsZero() {
			t.At = at
		}
		t.At = truncate(t.At)
		r, err := tx.StmtContext(ctx, s.st.resolveFrom).ExecContext(ctx, resolveArgs(in.ID, t)...)
		if err != nil {
			return nil, nil, fmt.Errorf("resolve: %w", err)
		}
		if n, err := r.RowsAffected(); err != nil || n != 1 {
			return nil, nil, fmt.Errorf("resolve: %d rows changed (%v)", n, err)
		}
		out = t.Applied(in)
		evs = append(evs, &hitl.Event{Type: t.EventType(), InteractionID: in.ID, At: t.At, Actor: t.By, Channel: t.Via, Detail: t.EventDetail()})
	}
	for i, ev := range evs {
		ev.Interaction = out
		if err := s.insertEvent(ctx, tx, ev); err != nil {
			return nil, nil, err
		}
		if i > 0 {
			evs[i-1].Next = ev
		}
	}
	if t := ch.Resolve; t != nil && t.Rule != nil {
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
		evs[len(evs)-1].Next = rev
	}
	if len(evs) == 0 {
		return nil, out, nil
	}
	return evs[0], out, nil
}
