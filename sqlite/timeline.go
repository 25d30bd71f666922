package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/hitl-sh/hitl"
)

// sqlInteractionEvents reads one interaction's events through the
// events_interaction index.
const sqlInteractionEvents = `SELECT seq, type, at, actor, channel, detail FROM events
	WHERE interaction_id = ? AND seq > ? ORDER BY seq LIMIT ?`

// InteractionEvents returns up to limit events of interaction id with
// Seq > after, in order, without their Interaction. A limit of 0 or less
// means hitl.MaxListLimit.
func (s *Store) InteractionEvents(ctx context.Context, id string, after int64, limit int) ([]*hitl.Event, error) {
	if limit <= 0 {
		limit = hitl.MaxListLimit
	}
	rows, err := s.r.QueryContext(ctx, sqlInteractionEvents, id, after, limit)
	if err != nil {
		return nil, fmt.Errorf("events of %s: %w", id, err)
	}
	defer rows.Close()
	var evs []*hitl.Event
	for rows.Next() {
		ev := hitl.Event{InteractionID: id}
		var at int64
		if err := rows.Scan(&ev.Seq, &ev.Type, &at, &ev.Actor, &ev.Channel, &ev.Detail); err != nil {
			return nil, fmt.Errorf("events of %s: %w", id, err)
		}
		ev.At = time.UnixMilli(at).UTC()
		evs = append(evs, &ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("events of %s: %w", id, err)
	}
	return evs, nil
}
