package webpush

import (
	"context"
	"time"

	"github.com/hitl-sh/hitl"
)

// deliver pushes a claimed row if its interaction is still pending and
// its subscription still exists.
func (s *Service) deliver(ctx context.Context, keys vapidKeys, n *hitl.Notification) {
	in := n.Interaction
	if in == nil || in.Status != hitl.StatusPending || in.PushOff() || in.Expired(s.now()) {
		s.move(ctx, n, hitl.NotificationSkipped, time.Time{}, 0)
		return
	}
	sub, err := s.subscription(ctx, n)
	if err != nil {
		s.retry(ctx, n, err)
		return
	}
	if sub == nil { // unsubscribed since
		s.move(ctx, n, hitl.NotificationSkipped, time.Time{}, 0)
		return
	}
	if err := s.push(ctx, keys, sub, in); err != nil {
		s.failed(ctx, n, err)
		return
	}
	if !s.move(ctx, n, hitl.NotificationSent, time.Time{}, 0) {
		s.log.Warn("a push was sent after its claim ran out; it may arrive twice", "interaction_id", in.ID)
		return
	}
	s.log.Info("pushed", "interaction_id", in.ID, "to", n.Responder, "push_service", endpointOrigin(n.Recipient))
	if _, err := s.b.AppendEvent(ctx, &hitl.Event{
		Type: hitl.EventNotified, InteractionID: in.ID, Channel: hitl.ChannelPush, Detail: "pushed to " + n.Responder,
	}); err != nil {
		s.log.Error("record the push notification", "interaction_id", in.ID, "error", err)
	}
}

// subscription returns the subscription a row is for, or nil when it is
// gone.
func (s *Service) subscription(ctx context.Context, n *hitl.Notification) (*hitl.PushSubscription, error) {
	subs, err := s.subs.PushSubscriptions(ctx, n.Responder)
	if err != nil {
		return nil, err
	}
	for _, sub := range subs {
		if sub.Endpoint == n.Recipient {
			return sub, nil
		}
	}
	return nil, nil
}

// failed handles a push that did not go through: a subscription that is
// gone is deleted, a refusal given up, anything else retried.
func (s *Service) failed(ctx context.Context, n *hitl.Notification, err error) {
	switch outcomeOf(err) {
	case gone:
		s.log.Info("the push service says a subscription is gone; deleting it", "user", n.Responder, "push_service", endpointOrigin(n.Recipient))
		if _, derr := s.subs.DeletePushSubscription(ctx, n.Responder, n.Recipient); derr != nil {
			s.log.Error("delete a gone push subscription", "error", derr)
		}
		s.move(ctx, n, hitl.NotificationSkipped, time.Time{}, 0)
	case refused:
		s.log.Error("gave up on a push", "interaction_id", n.InteractionID, "push_service", endpointOrigin(n.Recipient), "error", err)
		s.move(ctx, n, hitl.NotificationFailed, time.Time{}, 0)
	default:
		s.retry(ctx, n, err)
	}
}

// retry puts a claimed row back to wait after a backoff, or gives it up.
func (s *Service) retry(ctx context.Context, n *hitl.Notification, err error) {
	if ctx.Err() != nil {
		return // shutting down: the lease runs out and the row is taken up again
	}
	if n.Attempts >= maxAttempts {
		s.log.Error("gave up on a push", "interaction_id", n.InteractionID, "attempts", n.Attempts, "error", err)
		s.move(ctx, n, hitl.NotificationFailed, time.Time{}, 0)
		return
	}
	wait := s.retryBase << min(n.Attempts-1, 16)
	wait = min(wait, maxRetryDelay)
	s.log.Warn("a push failed; trying again later", "interaction_id", n.InteractionID, "attempts", n.Attempts, "retry_in", wait, "error", err)
	s.move(ctx, n, hitl.NotificationScheduled, s.now().Add(wait), n.Attempts)
}

// move sets a claimed row's state and reports whether the claim still
// held.
func (s *Service) move(ctx context.Context, n *hitl.Notification, state hitl.NotificationState, due time.Time, attempts int) bool {
	next := *n
	next.State, next.DueAt, next.Attempts = state, due, attempts
	ok, err := s.store.UpdateNotification(ctx, &next, n.State, n.Attempts)
	if err != nil {
		s.log.Error("update a push's row", "interaction_id", n.InteractionID, "error", err)
	}
	return ok
}
