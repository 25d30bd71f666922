package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/hitl-sh/hitl"
)

// envelope is the body of a subscription's delivery, in the shape
// Standard Webhooks recommends: the event's type, when it happened, and
// the interaction as it was then.
type envelope struct {
	Type      hitl.WebhookEvent `json:"type"`
	Timestamp time.Time         `json:"timestamp"`
	Data      *hitl.Interaction `json:"data"`
}

// enqueue turns the events after the store's cursor into delivery rows,
// one batch, and reports whether more events are waiting. Only events the
// feed has delivered are read: every event up to that number is
// committed, so none is skipped while another replica is still committing
// it.
func (s *Service) enqueue(ctx context.Context) (more bool, err error) {
	horizon := s.feed.Delivered()
	from, err := s.store.WebhookCursor(ctx)
	if err != nil || from >= horizon {
		return false, err
	}
	evs, err := s.store.Events(ctx, from, scanBatch)
	if err != nil {
		return false, err
	}
	subs, err := s.store.Webhooks(ctx)
	if err != nil {
		return false, err
	}
	to := from
	var ds []*hitl.WebhookDelivery
	for _, ev := range evs {
		if ev.Seq > horizon {
			break
		}
		to = ev.Seq
		made, err := s.deliveriesOf(ev, subs)
		if err != nil {
			return false, err
		}
		ds = append(ds, made...)
	}
	if len(evs) < scanBatch {
		to = horizon // read everything up to it (the rest was purged)
	}
	if _, err := s.store.EnqueueWebhookDeliveries(ctx, from, to, ds); err != nil {
		return false, err
	}
	// Lost the compare-and-set: another replica enqueued these; either
	// way, look again.
	return to < horizon, nil
}

// deliveriesOf returns the rows ev makes: one per subscription that wants
// it, and the interaction's callback when ev ends it.
func (s *Service) deliveriesOf(ev *hitl.Event, subs []*hitl.WebhookSubscription) ([]*hitl.WebhookDelivery, error) {
	kind, ok := hitl.WebhookEventOf(ev.Type)
	if !ok || ev.Interaction == nil {
		return nil, nil
	}
	in := asOf(ev, kind)
	now := s.now()
	row := func(sub, url string, body []byte) *hitl.WebhookDelivery {
		return &hitl.WebhookDelivery{ID: newID(), SubscriptionID: sub, InteractionID: ev.InteractionID, Event: kind,
			EventSeq: ev.Seq, URL: url, State: hitl.DeliveryPending, DueAt: now, CreatedAt: now, Body: body}
	}
	var out []*hitl.WebhookDelivery
	var wrapped []byte
	for _, sub := range subs {
		if !sub.Wants(kind) {
			continue
		}
		if wrapped == nil {
			var err error
			if wrapped, err = json.Marshal(envelope{Type: kind, Timestamp: ev.At.UTC(), Data: in}); err != nil {
				return nil, fmt.Errorf("event %d: %w", ev.Seq, err)
			}
		}
		out = append(out, row(sub.ID, sub.URL, wrapped))
	}
	if in.CallbackURL != "" && (kind == hitl.WebhookAnswered || kind == hitl.WebhookExpired || kind == hitl.WebhookCancelled) {
		body, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("event %d: %w", ev.Seq, err)
		}
		out = append(out, row("", in.CallbackURL, body))
	}
	return out, nil
}

// asOf returns the interaction as it was at its event: for created, as it
// was asked (pending, whatever it is now: its question never changes); for
// an end, as it is, since an ended interaction never changes again.
func asOf(ev *hitl.Event, kind hitl.WebhookEvent) *hitl.Interaction {
	in := *ev.Interaction
	if kind == hitl.WebhookCreated && in.Status != hitl.StatusPending {
		in.Status, in.Result = hitl.StatusPending, nil
	}
	return &in
}

// newID returns a delivery's ID, the webhook-id header: "msg_" and a
// UUIDv7's hex, so IDs sort by creation.
func newID() string {
	return "msg_" + strings.ReplaceAll(uuid.Must(uuid.NewV7()).String(), "-", "")
}
