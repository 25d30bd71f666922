package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/hitl-sh/hitl"
)

// insertEvent appends ev in tx and sets ev.Seq.
func (s *Store) insertEvent(ctx context.Context, tx *sql.Tx, ev *hitl.Event) error {
	var interaction any // NULL for an event of no interaction
	if ev.InteractionID != "" {
		interaction = ev.InteractionID
	}
	res, err := tx.StmtContext(ctx, s.st.insertEvent).ExecContext(ctx,
		string(ev.Type), interaction, ev.At.UnixMilli(), ev.Actor, ev.Channel, ev.Detail)
	if err != nil {
		return fmt.Errorf("append %s event: %w", ev.Type, err)
	}
	if ev.Seq, err = res.LastInsertId(); err != nil {
		return fmt.Errorf("append %s event: %w", ev.Type, err)
	}
	return nil
}

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
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		out.Interaction, err = scanInteraction(tx.StmtContext(ctx, s.st.interactionW).QueryRowContext(ctx, out.InteractionID))
		if errors.Is(err, sql.ErrNoRows) {
			return hitl.Errorf(hitl.ENOTFOUND, "interaction %q not found", out.InteractionID)
		} else if err != nil {
			return fmt.Errorf("read interaction: %w", err)
		}
		return s.insertEvent(ctx, tx, &out)
	})
	switch {
	case hitl.ErrorCode(err) == hitl.ENOTFOUND:
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("append event: %w", err)
	}
	return &out, nil
}

// Events returns up to limit events with Seq > after, in order, each with
// its interaction's current state (one query, joined), or none for an
// event of no interaction. A limit of 0 or less means hitl.MaxListLimit.
func (s *Store) Events(ctx context.Context, after int64, limit int) ([]*hitl.Event, error) {
	if limit <= 0 {
		limit = hitl.MaxListLimit
	}
	rows, err := s.st.events.QueryContext(ctx, after, limit)
	if err != nil {
		return nil, fmt.Errorf("events after %d: %w", after, err)
	}
	defer rows.Close()
	var evs []*hitl.Event
	for rows.Next() {
		var (
			ev          hitl.Event
			at          int64
			interaction sql.NullString
		)
		ev.Interaction, err = scanInteraction(rows, &ev.Seq, &ev.Type, &interaction, &at, &ev.Actor, &ev.Channel, &ev.Detail)
		if err != nil {
			return nil, fmt.Errorf("events after %d: %w", after, err)
		}
		ev.InteractionID = interaction.String
		if !interaction.Valid {
			ev.Interaction = nil
		}
		ev.At = fromMillis(sql.NullInt64{Int64: at, Valid: true})
		evs = append(evs, &ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("events after %d: %w", after, err)
	}
	return evs, nil
}

// LastEventSeq returns the sequence number of the newest event, 0 if none.
func (s *Store) LastEventSeq(ctx context.Context) (int64, error) {
	var seq int64
	if err := s.st.lastSeq.QueryRowContext(ctx).Scan(&seq); err != nil {
		return 0, fmt.Errorf("last event seq: %w", err)
	}
	return seq, nil
}
