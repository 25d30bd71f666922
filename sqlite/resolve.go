package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/hitl-sh/hitl"
)

// Resolve moves a pending interaction to t.Status as a compare-and-set (an
// UPDATE that only matches while the row is pending) and appends the
// matching event in the same transaction, with t.Rule and its rule_created
// event (ev.Next) when set. A person's answer (answered, not
// TimedOut) also only matches while t.At is before the deadline. When
// nothing matches it returns ENOTFOUND, or the current interaction with
// hitl.ErrNotPending or hitl.ErrPastDeadline, and writes nothing. A zero
// t.At means now. With a pending t.From, the row is not read back: the
// result is built from t.From.
func (s *Store) Resolve(ctx context.Context, id string, t hitl.Transition) (*hitl.Interaction, *hitl.Event, error) {
	if !t.Status.Terminal() {
		return nil, nil, hitl.Errorf(hitl.EINVALID, "resolve: status %q is not terminal", t.Status)
	}
	if t.At.IsZero() {
		t.At = s.now()
	}
	t.At = truncate(t.At)
	var (
		out *hitl.Interaction
		ev  *hitl.Event
	)
	from := t.Pending(id)
	args := resolveArgs(id, t)
	r, err := s.newRule(t.Rule, t.At)
	if err != nil {
		return nil, nil, fmt.Errorf("resolve interaction %s: %w", id, err)
	}
	err = s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		if from != nil {
			// Pending, the row is from: no need to read it back.
			var r sql.Result
			if r, err = tx.StmtContext(ctx, s.st.resolveFrom).ExecContext(ctx, args...); err != nil {
				return fmt.Errorf("update: %w", err)
			}
			var n int64
			if n, err = r.RowsAffected(); err != nil {
				return fmt.Errorf("update: %w", err)
			}
			if n == 0 {
				err = sql.ErrNoRows
			} else {
				out = t.Applied(from)
			}
		} else {
			out, err = scanInteraction(tx.StmtContext(ctx, s.st.resolve).QueryRowContext(ctx, args...))
		}
		if errors.Is(err, sql.ErrNoRows) {
			out, err = s.whyNot(ctx, tx, id)
			return err
		} else if err != nil {
			return fmt.Errorf("update: %w", err)
		}
		ev = &hitl.Event{
			Type:          t.EventType(),
			InteractionID: id,
			At:            t.At,
			Actor:         t.By,
			Channel:       t.Via,
			Detail:        t.EventDetail(),
			Interaction:   out,
		}
		if err := s.insertEvent(ctx, tx, ev); err != nil {
			return err
		}
		if r != nil {
			r.InteractionID = id
			ev.Next, err = s.insertRule(ctx, tx, r, t.Via, out)
		}
		return err
	})
	switch {
	case errors.Is(err, hitl.ErrNotPending), errors.Is(err, hitl.ErrPastDeadline):
		return out, nil, err
	case hitl.ErrorCode(err) == hitl.ENOTFOUND:
		return nil, nil, err
	case err != nil:
		return nil, nil, fmt.Errorf("resolve interaction %s: %w", id, err)
	}
	return out, ev, nil
}

// resolveArgs returns the parameters of the compare-and-set (sqlResolve
// and sqlResolveFrom) that moves id out of pending as t says.
func resolveArgs(id string, t hitl.Transition) []any {
	res := t.Result()
	beforeDeadline := t.Status == hitl.StatusAnswered && !t.TimedOut
	at := t.At.UnixMilli()
	return []any{string(t.Status), text(res.Value), res.RespondedBy, res.Channel, at, res.TimedOut, res.Reason, res.IdempotencyKey,
		text(res.ArgsDiff), res.RuleID, id, beforeDeadline, at}
}

// whyNot explains a compare-and-set that matched nothing: the interaction
// does not exist (ENOTFOUND), is no longer pending, or is pending but past
// its deadline for a person's answer. It returns the current interaction
// with hitl.ErrNotPending or hitl.ErrPastDeadline.
func (s *Store) whyNot(ctx context.Context, tx *sql.Tx, id string) (*hitl.Interaction, error) {
	in, err := scanInteraction(tx.StmtContext(ctx, s.st.interactionW).QueryRowContext(ctx, id))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, hitl.Errorf(hitl.ENOTFOUND, "interaction %q not found", id)
	case err != nil:
		return nil, fmt.Errorf("read current state: %w", err)
	case in.Status != hitl.StatusPending:
		return in, hitl.ErrNotPending
	default:
		return in, hitl.ErrPastDeadline
	}
}

// NextDeadline returns the earliest deadline of a pending interaction.
func (s *Store) NextDeadline(ctx context.Context) (time.Time, bool, error) {
	var ms sql.NullInt64
	err := s.st.nextDeadline.QueryRowContext(ctx).Scan(&ms)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil // nothing is pending
	} else if err != nil {
		return time.Time{}, false, fmt.Errorf("next deadline: %w", err)
	}
	return fromMillis(ms), ms.Valid, nil
}

// DueInteractions returns up to limit pending interactions whose deadline
// is at or before now, earliest first. A limit of 0 or less means
// hitl.MaxListLimit.
func (s *Store) DueInteractions(ctx context.Context, now time.Time, limit int) ([]*hitl.Interaction, error) {
	if limit <= 0 {
		limit = hitl.MaxListLimit
	}
	rows, err := s.st.due.QueryContext(ctx, now.UnixMilli(), limit)
	if err != nil {
		return nil, fmt.Errorf("due interactions: %w", err)
	}
	list, err := scanInteractions(rows, 0)
	if err != nil {
		return nil, fmt.Errorf("due interactions: %w", err)
	}
	return list, nil
}
