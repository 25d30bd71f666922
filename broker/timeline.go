package broker

import (
	"context"

	"github.com/hitl-sh/hitl"
)

// Timeline returns up to limit events of interaction id with Seq > after,
// in order (created, notified, answered, …), if the caller may see the
// interaction; ENOTFOUND otherwise, as Get. A limit of 0 means
// hitl.MaxListLimit.
func (b *Broker) Timeline(ctx context.Context, id string, after int64, limit int) ([]*hitl.Event, error) {
	if limit < 0 || limit > hitl.MaxListLimit {
		return nil, hitl.Errorf(hitl.EINVALID, "limit must be between 1 and %d", hitl.MaxListLimit)
	}
	if after < 0 {
		return nil, hitl.Errorf(hitl.EINVALID, "cursor must be an event's sequence number")
	}
	if _, err := b.visible(ctx, id); err != nil {
		return nil, err
	}
	return b.store.InteractionEvents(ctx, id, after, limit)
}
