package webhook

import (
	"context"
	"slices"
	"strings"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/standardwebhooks"
)

// MaxDescription bounds a subscription's description.
const MaxDescription = 1000

// requireAdmin refuses callers other than admins (and trusted in-process
// callers, who have no role).
func requireAdmin(ctx context.Context) error {
	c := hitl.CallerFrom(ctx)
	if c.Role != hitl.RoleAdmin && c.Role != "" {
		return hitl.Errorf(hitl.EFORBIDDEN, "only admins may manage webhooks")
	}
	return nil
}

// CheckURL returns why raw cannot be a webhook's or callback's URL: not an
// absolute http(s) URL or, unless private addresses are allowed, a host
// that is or resolves to a loopback, private or link-local address.
func (s *Service) CheckURL(ctx context.Context, raw string) error {
	return checkURL(ctx, s.resolver, raw, s.opts.AllowPrivate)
}

// CheckCallback returns why an interaction may not be created with
// callback_url raw: a URL CheckURL refuses, or no server secret to sign
// its delivery with.
func (s *Service) CheckCallback(ctx context.Context, raw string) error {
	if err := s.CheckURL(ctx, raw); err != nil {
		return hitl.Errorf(hitl.EINVALID, "callback_url %s", hitl.ErrorMessage(err))
	}
	if s.serverKey == nil {
		return hitl.Errorf(hitl.EINVALID, "callback_url cannot be used: the server has no webhook secret (HITL_WEBHOOK_SECRET, or HITL_SECRET_KEY to store one)")
	}
	return nil
}

// AddWebhook makes a subscription (admins only) and returns it with its
// secret, which is never shown again.
func (s *Service) AddWebhook(ctx context.Context, n hitl.WebhookRequest) (*hitl.WebhookSubscription, error) {
	if err := requireAdmin(ctx); err != nil {
		return nil, err
	}
	n.URL = strings.TrimSpace(n.URL)
	if n.URL == "" {
		return nil, hitl.Errorf(hitl.EINVALID, "url is required")
	}
	if err := s.CheckURL(ctx, n.URL); err != nil {
		return nil, hitl.Errorf(hitl.EINVALID, "url %s", hitl.ErrorMessage(err))
	}
	if len(n.Events) == 0 {
		return nil, hitl.Errorf(hitl.EINVALID, "events is required: one or more of %s", eventNames())
	}
	var events []hitl.WebhookEvent
	for _, e := range n.Events {
		if !e.Valid() {
			return nil, hitl.Errorf(hitl.EINVALID, "events: unknown event %q; the events are %s", e, eventNames())
		}
		if !slices.Contains(events, e) {
			events = append(events, e)
		}
	}
	if len(n.Description) > MaxDescription {
		return nil, hitl.Errorf(hitl.EINVALID, "description must be at most %d bytes", MaxDescription)
	}
	if s.opts.Sealer == nil {
		return nil, errNoSealer
	}
	secret, err := standardwebhooks.NewSecret()
	if err != nil {
		return nil, err
	}
	sealed, err := s.opts.Sealer.Seal(sealField, secret)
	if err != nil {
		return nil, err
	}
	w := &hitl.WebhookSubscription{ID: "wh_" + strings.TrimPrefix(newID(), "msg_"), URL: n.URL, Events: events,
		Description: n.Description, Secret: sealed, CreatedBy: hitl.CallerFrom(ctx).Name, CreatedAt: s.now().UTC().Truncate(1e6)}
	if err := s.store.CreateWebhook(ctx, w); err != nil {
		return nil, err
	}
	out := *w
	out.Secret = secret
	return &out, nil
}

// Webhooks lists the subscriptions, oldest first, without their secrets
// (admins only).
func (s *Service) Webhooks(ctx context.Context) ([]*hitl.WebhookSubscription, error) {
	if err := requireAdmin(ctx); err != nil {
		return nil, err
	}
	list, err := s.store.Webhooks(ctx)
	for _, w := range list {
		w.Secret = ""
	}
	return list, err
}

// Webhook returns one subscription without its secret (admins only).
func (s *Service) Webhook(ctx context.Context, id string) (*hitl.WebhookSubscription, error) {
	if err := requireAdmin(ctx); err != nil {
		return nil, err
	}
	w, err := s.store.Webhook(ctx, id)
	if err != nil {
		return nil, err
	}
	w.Secret = ""
	return w, nil
}

// DeleteWebhook deletes a subscription and its deliveries, sent or not
// (admins only).
func (s *Service) DeleteWebhook(ctx context.Context, id string) error {
	if err := requireAdmin(ctx); err != nil {
		return err
	}
	return s.store.DeleteWebhook(ctx, id)
}

// Deliveries lists deliveries, newest first, with their attempts: those
// of one interaction or of one subscription (admins only).
func (s *Service) Deliveries(ctx context.Context, f hitl.DeliveryFilter) ([]*hitl.WebhookDelivery, error) {
	if err := requireAdmin(ctx); err != nil {
		return nil, err
	}
	if f.SubscriptionID != "" {
		if _, err := s.store.Webhook(ctx, f.SubscriptionID); err != nil {
			return nil, err
		}
	}
	return s.store.WebhookDeliveries(ctx, f)
}

// ServerSecret returns the secret callback_url deliveries are signed with
// (admins only), for the agents that verify them.
func (s *Service) ServerSecret(ctx context.Context) (string, error) {
	if err := requireAdmin(ctx); err != nil {
		return "", err
	}
	if s.serverKey == nil {
		return "", hitl.Errorf(hitl.ENOTFOUND, "the server has no webhook secret (HITL_WEBHOOK_SECRET, or HITL_SECRET_KEY to store one)")
	}
	return s.serverSecret, nil
}

// eventNames lists the events a subscription may name.
func eventNames() string {
	names := make([]string, len(hitl.WebhookEvents))
	for i, e := range hitl.WebhookEvents {
		names[i] = string(e)
	}
	return strings.Join(names, ", ")
}
