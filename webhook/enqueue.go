package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
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

// enqueue turns the events after the cursor into delivery rows, one
// batch, and reports whether more events are waiting. Only events the
// feed has delivered are read: every event up to that number is
// committed, so none is skipped while another replica is still committing
// it.
//
// Events that make no row (no subscription wants them and they have no
// callback: most events, on most servers) move the cursor in memory only,
// so that they cost the single writer nothing; the store's cursor catches
// up with the next rows, or once it has lagged for cursorFlush. After a
// crash those events are read again and make no rows again: a
// subscription gets only the events after it was made (see deliveriesOf).
func (s *Service) enqueue(ctx context.Context) (more bool, err error) {
	c := &s.cursor
	if !c.known {
		stored, err := s.store.WebhookCursor(ctx)
		if err != nil {
			return false, err
		}
		*c = cursor{stored: stored, scanned: stored, known: true}
	}
	horizon := s.feed.Delivered()
	if c.scanned >= horizon {
		return false, s.flushHeld(ctx)
	}
	evs, err := s.events(ctx, c.scanned, horizon)
	if err != nil {
		return false, err
	}
	subs, err := s.store.Webhooks(ctx)
	if err != nil {
		return false, err
	}
	to := c.scanned
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
	if len(ds) == 0 {
		if c.scanned == c.stored {
			c.heldSince = s.now()
		}
		c.scanned = to
		s.recent.drop(to)
		return to < horizon, s.flushHeld(ctx)
	}
	return to < horizon, s.write(ctx, to, ds)
}

// events returns the events after from, one batch: those the feed
// delivered, while they are all held in memory, else read from the store.
func (s *Service) events(ctx context.Context, from, horizon int64) ([]*hitl.Event, error) {
	if evs, ok := s.recent.since(from, horizon, scanBatch); ok {
		return evs, nil
	}
	return s.store.Events(ctx, from, scanBatch)
}

// write inserts ds and moves the store's cursor to to, if it is still
// where this worker last saw it. If another replica moved it (which also
// means it enqueued these events), the cursor is read again.
func (s *Service) write(ctx context.Context, to int64, ds []*hitl.WebhookDelivery) error {
	ok, err := s.store.EnqueueWebhookDeliveries(ctx, s.cursor.stored, to, ds)
	switch {
	case err != nil:
		return err
	case !ok:
		s.cursor.known = false
	default:
		s.cursor = cursor{stored: to, scanned: to, known: true}
		s.recent.drop(to)
	}
	return nil
}

// cursorFlush is how long the store's cursor may lag behind the events
// read that made no rows.
const cursorFlush = 10 * time.Second

// flushHeld writes the cursor held in memory once it has lagged the
// store's for cursorFlush.
func (s *Service) flushHeld(ctx context.Context) error {
	c := &s.cursor
	if c.scanned <= c.stored || s.now().Sub(c.heldSince) < cursorFlush {
		return nil
	}
	return s.write(ctx, c.scanned, nil)
}

// deliveriesOf returns the rows ev makes: one per subscription that wants
// it and was made before it, and the interaction's callback when ev ends
// it.
func (s *Service) deliveriesOf(ev *hitl.Event, subs []*hitl.WebhookSubscription) ([]*hitl.WebhookDelivery, error) {
	kind, ok := hitl.WebhookEventOf(ev.Type)
	if !ok || ev.Interaction == nil {
		return nil, nil
	}
	callback := ev.Interaction.CallbackURL != "" &&
		(kind == hitl.WebhookAnswered || kind == hitl.WebhookExpired || kind == hitl.WebhookCancelled)
	if !callback && !anyWants(subs, kind, ev) {
		return nil, nil // most events: no copy of the interaction to make
	}
	in := asOf(ev, kind)
	if r, ok := s.feed.(receipter); ok && kind == hitl.WebhookAnswered {
		in = r.WithReceipt(in)
	}
	now := s.now()
	row := func(sub, url string, body []byte) *hitl.WebhookDelivery {
		return &hitl.WebhookDelivery{ID: newID(), SubscriptionID: sub, InteractionID: ev.InteractionID, Event: kind,
			EventSeq: ev.Seq, URL: url, State: hitl.DeliveryPending, DueAt: now, CreatedAt: now, Body: body}
	}
	var out []*hitl.WebhookDelivery
	var wrapped []byte
	for _, sub := range subs {
		if !gets(sub, kind, ev) {
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
	if callback {
		body, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("event %d: %w", ev.Seq, err)
		}
		out = append(out, row("", in.CallbackURL, body))
	}
	return out, nil
}

// receipter is a feed that signs an approved action's receipt (a
// *broker.Broker): a callback or an answered event of one carries it in
// result.receipt, as a read of the interaction does, so that what runs the
// action can check it was approved, with these args.
type receipter interface {
	WithReceipt(in *hitl.Interaction) *hitl.Interaction
}

// anyWants reports whether a subscription in subs gets ev, an event of
// kind.
func anyWants(subs []*hitl.WebhookSubscription, kind hitl.WebhookEvent, ev *hitl.Event) bool {
	return slices.ContainsFunc(subs, func(sub *hitl.WebhookSubscription) bool { return gets(sub, kind, ev) })
}

// gets reports whether sub gets ev, an event of kind: it wants the kind
// and was made before the event.
func gets(sub *hitl.WebhookSubscription, kind hitl.WebhookEvent, ev *hitl.Event) bool {
	return sub.Wants(kind) && !sub.CreatedAt.After(ev.At)
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
