package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/jackc/pgx/v5"
)

// Resolve moves a pending interaction to t.Status as a compare-and-set (an
// UPDATE that only matches while the row is pending) and appends the
// matching event in the same statement (with t.Rule and its rule_created
// event, ev.Next, in the same transaction when set). Concurrent Resolves of one
// interaction, from any number of replicas, queue on its row lock, and
// each re-checks the condition once the one before commits: exactly one
// matches. A person's answer (answered, not TimedOut) also only matches
// while t.At is before the deadline. When nothing matches it returns
// ENOTFOUND, or the current interaction with hitl.ErrNotPending or
// hitl.ErrPastDeadline, and writes nothing. A zero t.At means now. With a
// pending t.From, the row is not sent back: the result is built from it.
func (s *Store) Resolve(ctx context.Context, id string, t hitl.Transition) (*hitl.Interaction, *hitl.Event, error) {
	if !t.Status.Terminal() {
		return nil, nil, hitl.Errorf(hitl.EINVALID, "resolve: status %q is not terminal", t.Status)
	}
	if t.At.IsZero() {
		t.At = s.now()
	}
	t.At = truncate(t.At)
	ev := &hitl.Event{
		Type:          t.EventType(),
		InteractionID: id,
		At:            t.At,
		Actor:         t.By,
		Channel:       t.Via,
		Detail:        t.EventDetail(),
	}

	args := s.resolveArgs(id, t)
	from := t.Pending(id)
	r, err := s.newRule(t.Rule, t.At)
	if err != nil {
		return nil, nil, fmt.Errorf("resolve interaction %s: %w", id, err)
	}
	// The compare-and-set and the reading of its row: ErrNoRows when
	// nothing matched.
	sql, scan := sqlResolve, func(r pgx.Row) error {
		var err error
		ev.Interaction, err = scanInteraction(r, &ev.Seq, nil)
		return err
	}
	if from != nil {
		// Pending, the row is from: no need to send it back.
		sql, scan = sqlResolveFrom, func(r pgx.Row) error {
			if err := r.Scan(&ev.Seq, nil); err != nil {
				return err
			}
			ev.Interaction = t.Applied(from)
			return nil
		}
	}
	if r == nil {
		err = s.group.write(ctx, "i\x00"+id, sql, args, scan)
	} else {
		// The answer and the rule it makes, in one transaction.
		err = s.with(ctx, func(c *pgx.Conn) error {
			return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
				if err := scan(tx.QueryRow(ctx, sql, args...)); err != nil {
					return err
				}
				r.InteractionID = id
				var err error
				ev.Next, err = s.insertRule(ctx, tx, r, t.Via, ev.Interaction)
				return err
			})
		})
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return s.whyNot(ctx, id)
	} else if hitl.ErrorCode(err) == hitl.ECONFLICT {
		return nil, nil, err
	} else if err != nil {
		return nil, nil, fmt.Errorf("resolve interaction %s: %w", id, badText(err))
	}
	return ev.Interaction, ev, nil
}

// resolveArgs returns the parameters of the compare-and-set (sqlResolve
// and sqlResolveFrom) that moves id out of pending as t says, with its
// event.
func (s *Store) resolveArgs(id string, t hitl.Transition) []any {
	res := t.Result()
	beforeDeadline := t.Status == hitl.StatusAnswered && !t.TimedOut
	return []any{id, string(t.Status), text(res.Value), res.RespondedBy, res.Channel,
		t.At, res.TimedOut, res.Reason, beforeDeadline, string(t.EventType()), s.channel, res.IdempotencyKey,
		text(res.ArgsDiff), res.RuleID, t.EventDetail()}
}

// whyNot explains a compare-and-set that matched nothing: the interaction
// does not exist (ENOTFOUND), is no longer pending, or is pending but past
// its deadline for a person's answer. Statuses only move out of pending,
// so reading after the failed update tells which.
func (s *Store) whyNot(ctx context.Context, id string) (*hitl.Interaction, *hitl.Event, error) {
	in, err := s.interaction(ctx, id)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, nil, hitl.Errorf(hitl.ENOTFOUND, "interaction %q not found", id)
	case err != nil:
		return nil, nil, fmt.Errorf("resolve interaction %s: read current state: %w", id, badText(err))
	case in.Status != hitl.StatusPending:
		return in, nil, hitl.ErrNotPending
	default:
		return in, nil, hitl.ErrPastDeadline
	}
}

// NextDeadline returns the earliest deadline of a pending interaction.
func (s *Store) NextDeadline(ctx context.Context) (time.Time, bool, error) {
	var next *time.Time
	err := s.queryRow(ctx, sqlNextDeadline, nil, &next)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, false, nil // nothing is pending
	} else if err != nil {
		return time.Time{}, false, fmt.Errorf("next deadline: %w", err)
	}
	return utc(next), next != nil, nil
}

// DueInteractions returns up to limit pending interactions whose deadline
// is at or before now, earliest first. Rows another replica is resolving
// at this moment are left out (SKIP LOCKED) rather than waited for; the
// compare-and-set in Resolve is what makes each deadline fire once. A
// limit of 0 or less means hitl.MaxListLimit.
func (s *Store) DueInteractions(ctx context.Context, now time.Time, limit int) ([]*hitl.Interaction, error) {
	if limit <= 0 {
		limit = hitl.MaxListLimit
	}
	var list []*hitl.Interaction
	err := s.with(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, sqlDue, now, limit)
		if err != nil {
			return err
		}
		list, err = scanInteractions(rows, 0)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("due interactions: %w", err)
	}
	return list, nil
}
