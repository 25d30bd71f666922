package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/jackc/pgx/v5"
)

// AppendEvent appends an event that does not change the interaction's
// status, such as notified. It returns a copy of ev with Seq set, At
// defaulted to now and kept to the millisecond, and Interaction filled in;
// ev itself is not modified. An unknown interaction is ENOTFOUND.
func (s *Store) AppendEvent(ctx context.Context, ev *hitl.Event) (*hitl.Event, error) {
	if ev.Type == "" {
		return nil, hitl.Errorf(hitl.EINVALID, "append event: type is required")
	}
	out := *ev
	if out.At.IsZero() {
		out.At = s.now()
	}
	out.At = truncate(out.At)
	args := []any{out.InteractionID, string(out.Type), out.At, out.Actor, out.Channel, out.Detail, s.channel}
	err := s.group.write(ctx, "i\x00"+out.InteractionID, sqlAppendEvent, args, func(r pgx.Row) error {
		var err error
		out.Interaction, err = scanInteraction(r, &out.Seq, nil)
		return err
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, hitl.Errorf(hitl.ENOTFOUND, "interaction %q not found", out.InteractionID)
	case err != nil:
		return nil, fmt.Errorf("append event: %w", badText(err))
	}
	return &out, nil
}

// Events returns up to limit events with Seq > after, in order, each with
// its interaction's current state (one query, joined), or none for an
// event of no interaction. A limit of 0 or less means hitl.MaxListLimit.
//
// Only committed events are read, and transactions can commit out of
// sequence order, so an event may appear after one with a higher Seq has
// been read; ListenEvents says up to where the log is complete.
func (s *Store) Events(ctx context.Context, after int64, limit int) ([]*hitl.Event, error) {
	if limit <= 0 {
		limit = hitl.MaxListLimit
	}
	var evs []*hitl.Event
	err := s.with(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, sqlEvents, after, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				ev          hitl.Event
				typ         string
				interaction *string
			)
			ev.Interaction, err = scanInteraction(rows, &ev.Seq, &typ, &interaction, &ev.At, &ev.Actor, &ev.Channel, &ev.Detail)
			if err != nil {
				return err
			}
			if interaction == nil {
				ev.Interaction = nil
			} else {
				ev.InteractionID = *interaction
			}
			ev.Type = hitl.EventType(typ)
			ev.At = ev.At.UTC()
			evs = append(evs, &ev)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("events after %d: %w", after, err)
	}
	return evs, nil
}

// LastEventSeq returns the sequence number of the newest committed event,
// 0 if none. It returns once every smaller number is committed or rolled
// back: it waits for the transactions that were writing events when it
// read the number (normally a few milliseconds), so a broker starting
// from it cannot miss an event another replica is still committing.
func (s *Store) LastEventSeq(ctx context.Context) (int64, error) {
	var seq int64
	err := s.with(ctx, func(c *pgx.Conn) error {
		if err := c.QueryRow(ctx, sqlLastSeq).Scan(&seq); err != nil {
			return err
		}
		w, err := writers(ctx, c)
		if err != nil {
			return err
		}
		for wait := time.Millisecond; len(w) > 0; wait = min(2*wait, 50*time.Millisecond) {
			now, err := writers(ctx, c)
			if err != nil || !running(w, now) {
				return err
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait):
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("last event seq: %w", err)
	}
	return seq, nil
}
