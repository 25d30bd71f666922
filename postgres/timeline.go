package postgres

import (
	"context"
	"fmt"

	"github.com/hitl-sh/hitl"
	"github.com/jackc/pgx/v5"
)

// sqlInteractionEvents reads one interaction's events through the
// events_interaction index.
const sqlInteractionEvents = `SELECT seq, type, at, actor, channel, detail FROM events
	WHERE interaction_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`

// InteractionEvents returns up to limit committed events of interaction
// id with Seq > after, in order, without their Interaction. A limit of 0
// or less means hitl.MaxListLimit.
func (s *Store) InteractionEvents(ctx context.Context, id string, after int64, limit int) ([]*hitl.Event, error) {
	if limit <= 0 {
		limit = hitl.MaxListLimit
	}
	var evs []*hitl.Event
	err := s.with(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, sqlInteractionEvents, id, after, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			ev := hitl.Event{InteractionID: id}
			var typ string
			if err := rows.Scan(&ev.Seq, &typ, &ev.At, &ev.Actor, &ev.Channel, &ev.Detail); err != nil {
				return err
			}
			ev.Type = hitl.EventType(typ)
			ev.At = ev.At.UTC()
			evs = append(evs, &ev)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("events of %s: %w", id, badText(err))
	}
	return evs, nil
}
