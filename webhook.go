package hitl

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"time"
)

// MaxCallbackURL bounds the length of a callback or webhook URL.
const MaxCallbackURL = 2048

// WebhookEvent names what a webhook subscription is sent: one of the
// interaction's events, as Standard Webhooks' dotted event types.
type WebhookEvent string

// The events a webhook may subscribe to.
const (
	WebhookCreated   WebhookEvent = "interaction.created"
	WebhookAnswered  WebhookEvent = "interaction.answered"
	WebhookExpired   WebhookEvent = "interaction.expired"
	WebhookCancelled WebhookEvent = "interaction.cancelled"
	// A step of the interaction's escalation reminded its people, or
	// added some (see EscalationStep).
	WebhookReminded  WebhookEvent = "interaction.reminded"
	WebhookEscalated WebhookEvent = "interaction.escalated"
)

// WebhookEvents lists every event a webhook may subscribe to.
var WebhookEvents = []WebhookEvent{WebhookCreated, WebhookAnswered, WebhookExpired, WebhookCancelled, WebhookReminded, WebhookEscalated}

// Valid reports whether e is one of WebhookEvents.
func (e WebhookEvent) Valid() bool {
	switch e {
	case WebhookCreated, WebhookAnswered, WebhookExpired, WebhookCancelled, WebhookReminded, WebhookEscalated:
		return true
	}
	return false
}

// WebhookEventOf returns the webhook event of an event in the log, and
// false for an event no webhook is sent for (notified, rules).
func WebhookEventOf(t EventType) (WebhookEvent, bool) {
	switch t {
	case EventCreated:
		return WebhookCreated, true
	case EventAnswered:
		return WebhookAnswered, true
	case EventExpired:
		return WebhookExpired, true
	case EventCancelled:
		return WebhookCancelled, true
	case EventReminded:
		return WebhookReminded, true
	case EventEscalated:
		return WebhookEscalated, true
	}
	return "", false
}

// WebhookSubscription is an admin's standing request to be sent some
// events of every interaction.
type WebhookSubscription struct {
	ID          string         `json:"id"`
	URL         string         `json:"url"`
	Events      []WebhookEvent `json:"events"`
	Description string         `json:"description,omitempty"`
	CreatedBy   string         `json:"created_by"`
	CreatedAt   time.Time      `json:"created_at"`
	// Secret signs the subscription's deliveries (whsec_…). A store keeps
	// it sealed; the API shows it once, in the reply that creates it.
	Secret string `json:"secret,omitempty"`
}

// WebhookRequest is a subscription to make: where, and which events.
type WebhookRequest struct {
	URL         string         `json:"url"`
	Events      []WebhookEvent `json:"events"`
	Description string         `json:"description,omitempty"`
}

// Wants reports whether the subscription is sent e.
func (w *WebhookSubscription) Wants(e WebhookEvent) bool {
	for _, x := range w.Events {
		if x == e {
			return true
		}
	}
	return false
}

// DeliveryState is where a webhook delivery is in its life.
//
//	pending ─claim─▶ sending ─2xx─▶ delivered
//	   ▲                │
//	   └───(retry)──────┴─(a day of failures)─▶ failed
//
// A sending row holds a lease until its DueAt: when the process sending
// it dies, the row is claimed again after that, with the same ID.
type DeliveryState string

// Delivery states.
const (
	DeliveryPending   DeliveryState = "pending"
	DeliverySending   DeliveryState = "sending"
	DeliveryDelivered DeliveryState = "delivered"
	DeliveryFailed    DeliveryState = "failed"
)

// WebhookDelivery is the durable row behind one POST of one event to one
// URL: its body is fixed when it is made, and its ID (the webhook-id
// header) is the same on every attempt, so that receivers can tell a
// retry from a new event.
type WebhookDelivery struct {
	ID string `json:"id"`
	// SubscriptionID is the subscription it is for; "" for the
	// interaction's own callback_url, signed with the server's secret.
	SubscriptionID string        `json:"subscription_id,omitempty"`
	InteractionID  string        `json:"interaction_id"`
	Event          WebhookEvent  `json:"event"`
	EventSeq       int64         `json:"event_seq"`
	URL            string        `json:"url"`
	State          DeliveryState `json:"state"`
	// Attempts counts claims; a claim's holder passes it back as a
	// fencing token.
	Attempts int `json:"attempts"`
	// DueAt is when the row has work to do (the next attempt, or the end
	// of a claim's lease); zero once delivered or failed.
	DueAt       time.Time  `json:"-"`
	CreatedAt   time.Time  `json:"created_at"`
	DeliveredAt *time.Time `json:"delivered_at,omitempty"`
	// History is the attempts made, oldest first, when read for the API.
	History []*WebhookAttempt `json:"history"`
	// Body is the JSON sent.
	Body json.RawMessage `json:"-"`
	// Secret is the subscription's sealed secret, filled in by
	// ClaimWebhookDeliveries ("" for a callback).
	Secret string `json:"-"`
}

// NextAttemptAt is when a pending delivery is next tried (nil otherwise).
func (d *WebhookDelivery) NextAttemptAt() *time.Time {
	if d.State != DeliveryPending || d.DueAt.IsZero() {
		return nil
	}
	t := d.DueAt
	return &t
}

// MarshalJSON adds next_attempt_at to the stored fields.
func (d *WebhookDelivery) MarshalJSON() ([]byte, error) {
	type plain WebhookDelivery
	return json.Marshal(struct {
		*plain
		NextAttemptAt *time.Time `json:"next_attempt_at,omitempty"`
	}{(*plain)(d), d.NextAttemptAt()})
}

// WebhookAttempt is one try at a delivery: what the receiver answered, or
// why no answer came.
type WebhookAttempt struct {
	DeliveryID string    `json:"-"`
	Attempt    int       `json:"attempt"`
	At         time.Time `json:"at"`
	StatusCode int       `json:"status_code,omitempty"`
	// Error says why it failed: the network error, or the receiver's
	// status; "" when it succeeded.
	Error      string `json:"error,omitempty"`
	DurationMS int64  `json:"duration_ms"`
}

// DeliveryFilter selects deliveries to list, newest first: those of one
// interaction or of one subscription.
type DeliveryFilter struct {
	InteractionID  string
	SubscriptionID string
	Limit          int // 1..500; 0 means 50
}

// WebhookStore keeps the webhooks' durable state: subscriptions, the
// server's signing secret (sealed), how far the event log has been turned
// into deliveries, and one row per delivery with its attempts. Delivery
// rows are claimed like Slack's: once however many processes share the
// store, until the claim's lease runs out.
type WebhookStore interface {
	// CreateWebhook inserts a subscription (ID, CreatedAt and the sealed
	// Secret set by the caller).
	CreateWebhook(ctx context.Context, w *WebhookSubscription) error
	// Webhooks returns every subscription, oldest first, secrets sealed.
	Webhooks(ctx context.Context) ([]*WebhookSubscription, error)
	// Webhook returns one subscription, or ENOTFOUND.
	Webhook(ctx context.Context, id string) (*WebhookSubscription, error)
	// DeleteWebhook deletes a subscription with its deliveries and their
	// attempts, or returns ENOTFOUND.
	DeleteWebhook(ctx context.Context, id string) error

	// WebhookSecret returns the server's sealed secret, or ENOTFOUND.
	WebhookSecret(ctx context.Context) (string, error)
	// InitWebhookSecret stores sealed as the server's secret unless one is
	// stored already, and returns the one stored: the first replica to
	// make one wins.
	InitWebhookSecret(ctx context.Context, sealed string) (string, error)

	// WebhookCursor returns the sequence number of the last event turned
	// into deliveries.
	WebhookCursor(ctx context.Context) (int64, error)
	// EnqueueWebhookDeliveries inserts ds and moves the cursor from from
	// to to, in one transaction, if the cursor is still at from (a
	// compare-and-set, so that two replicas never enqueue one event
	// twice); it reports whether it was.
	EnqueueWebhookDeliveries(ctx context.Context, from, to int64, ds []*WebhookDelivery) (bool, error)
	// NextWebhookDue returns the earliest DueAt of a pending or sending
	// delivery.
	NextWebhookDue(ctx context.Context) (due time.Time, ok bool, err error)
	// ClaimWebhookDeliveries claims up to limit pending or sending rows
	// due at now, earliest first: each becomes sending, due at leaseUntil,
	// with Attempts incremented, and comes with its Body and Secret.
	ClaimWebhookDeliveries(ctx context.Context, now, leaseUntil time.Time, limit int) ([]*WebhookDelivery, error)
	// RecordWebhookAttempt appends a and writes d's State, DueAt and
	// DeliveredAt, if the row is still sending with attempts claims (the
	// claim's fencing token); it reports whether it was.
	RecordWebhookAttempt(ctx context.Context, d *WebhookDelivery, a *WebhookAttempt, attempts int) (bool, error)
	// WebhookDeliveries returns deliveries newest first, with their
	// History.
	WebhookDeliveries(ctx context.Context, f DeliveryFilter) ([]*WebhookDelivery, error)
}

// checkCallbackURL validates an interaction's callback_url: an absolute
// http or https URL. Whether its host is one hitl may call is decided
// where the server's settings are known (the webhook package).
func checkCallbackURL(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	if err := CheckWebhookURL(s); err != nil {
		return "", Errorf(EINVALID, "callback_url %s", ErrorMessage(err))
	}
	return s, nil
}

// CheckWebhookURL reports why s cannot be a webhook's URL: it must be an
// absolute http or https URL with a host, at most MaxCallbackURL bytes.
func CheckWebhookURL(s string) error {
	if len(s) > MaxCallbackURL {
		return Errorf(EINVALID, "must be at most %d bytes", MaxCallbackURL)
	}
	if !validText(s) {
		return Errorf(EINVALID, "must be valid UTF-8 text")
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return Errorf(EINVALID, "must be an absolute http or https URL; got %q", s)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return Errorf(EINVALID, "must be an http or https URL; got scheme %q", u.Scheme)
	}
	if u.Fragment != "" {
		return Errorf(EINVALID, "must not have a #fragment")
	}
	return nil
}
