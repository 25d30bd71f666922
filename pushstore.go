package hitl

import (
	"context"
	"time"
)

// PushSubscription is one browser's Web Push subscription (the Push API's
// PushSubscription), kept for the person who made it.
type PushSubscription struct {
	// Endpoint is the push service's URL for this browser; it identifies
	// the subscription.
	Endpoint string `json:"endpoint"`
	User     string `json:"user"`
	// P256DH and Auth are the browser's keys (base64url, as the Push API
	// gives them) that encrypt what is sent to it.
	P256DH string `json:"p256dh"`
	Auth   string `json:"auth"`
	// Untargeted says the person also wants questions that target no one
	// in particular.
	Untargeted bool      `json:"untargeted"`
	CreatedAt  time.Time `json:"created_at"`
}

// PushStore keeps people's Web Push subscriptions.
type PushStore interface {
	// SavePushSubscription adds s, or replaces the subscription with the
	// same endpoint.
	SavePushSubscription(ctx context.Context, s *PushSubscription) error
	// PushSubscriptions returns the subscriptions of user, or every
	// subscription when user is "", oldest first.
	PushSubscriptions(ctx context.Context, user string) ([]*PushSubscription, error)
	// DeletePushSubscription removes the subscription with endpoint (of
	// user, unless user is ""), and reports whether there was one.
	DeletePushSubscription(ctx context.Context, user, endpoint string) (bool, error)
}

// PushSubscribeRequest is what a browser sends to be told of questions:
// its PushSubscription as the Push API serializes it (toJSON), and whether
// it also wants questions that target no one in particular.
type PushSubscribeRequest struct {
	Endpoint string `json:"endpoint"`
	// ExpirationTime is the Push API's (milliseconds since the epoch, or
	// null); it is accepted and not used.
	ExpirationTime *float64 `json:"expirationTime,omitempty"`
	Keys           PushKeys `json:"keys"`
	Untargeted     bool     `json:"untargeted"`
}

// PushKeys are a subscription's keys, base64url as the Push API gives
// them: the browser's P-256 public key and its 16-byte auth secret.
type PushKeys struct {
	P256DH string `json:"p256dh"`
	Auth   string `json:"auth"`
}
