package hitl

import (
	"context"
	"time"
)

// NotificationState is where one notification (a mail, a push) is in its
// life.
//
//	scheduled ─claim─▶ sending ─▶ sent
//	    │                 │
//	    └─(ended first)───┴─▶ skipped      failed ◀─(gave up)
//
// A sending row holds a lease until its DueAt: when the process holding
// it dies, the row is claimed again after that.
type NotificationState string

// Notification states.
const (
	NotificationScheduled NotificationState = "scheduled" // to be sent at DueAt if still pending
	NotificationSending   NotificationState = "sending"   // claimed; DueAt ends the lease
	NotificationSent      NotificationState = "sent"      // delivered to the channel's service
	NotificationSkipped   NotificationState = "skipped"   // ended (or no one to tell) before it was due
	NotificationFailed    NotificationState = "failed"    // gave up after repeated errors
)

// Notification channels that keep their rows in a NotificationStore.
const (
	ChannelEmail = "email"
	ChannelPush  = "push"
)

// Notification is the durable row behind telling one recipient of one
// interaction on one channel. Round numbers repeated notifications of the
// same recipient (0 for the first), so that reminders can add rows.
type Notification struct {
	// ID is minted by the caller (a UUID); links in a mail name their row
	// by it.
	ID            string
	InteractionID string
	Channel       string // ChannelEmail, ChannelPush
	// Recipient is who is told: an email address for mail, a user name
	// for push; "" on the row that records there was no one to tell.
	Recipient string
	// Responder is the name the recipient answers as (a hitl user's
	// name, or the address itself).
	Responder string
	Round     int
	State     NotificationState
	// DueAt is when the row has work to do (send, retry, or a claim's
	// lease running out); zero when it has none.
	DueAt time.Time
	// Attempts counts claims since the row last moved on; a claim's
	// holder passes it back as a fencing token.
	Attempts  int
	CreatedAt time.Time
	// UsedAt is when a link of this notification recorded an answer;
	// zero until then.
	UsedAt time.Time

	// Interaction is filled in by ClaimNotifications and Notification.
	Interaction *Interaction
}

// NotificationStore keeps the durable rows of the channels that tell
// people one by one (email, push), and their stored settings. Rows are
// claimed exactly once however many processes share the store.
type NotificationStore interface {
	// ChannelSettings returns the JSON settings stored for channel, or
	// ENOTFOUND when none were ever saved. Secrets in them are sealed by
	// the channel.
	ChannelSettings(ctx context.Context, channel string) ([]byte, error)
	// SaveChannelSettings replaces the settings stored for channel.
	SaveChannelSettings(ctx context.Context, channel string, settings []byte) error
	// InitChannelSettings stores settings for channel unless some are
	// stored already, and returns what is stored (so replicas starting
	// together agree on generated keys).
	InitChannelSettings(ctx context.Context, channel string, settings []byte) ([]byte, error)

	// ScheduleNotifications inserts each row whose (interaction, channel,
	// recipient, round) has none yet and returns how many it inserted.
	ScheduleNotifications(ctx context.Context, ns []*Notification) (int, error)
	// UnnotifiedInteractions returns a page of the pending interactions
	// that have no row on f.Channel yet, oldest first (see
	// UnnotifiedFilter).
	UnnotifiedInteractions(ctx context.Context, f UnnotifiedFilter) ([]*Interaction, error)
	// NextNotificationDue returns the earliest DueAt of a scheduled or
	// sending row on channel.
	NextNotificationDue(ctx context.Context, channel string) (due time.Time, ok bool, err error)
	// ClaimNotifications claims up to limit rows on channel due at now,
	// earliest first, as a compare-and-set: scheduled and sending rows
	// become sending with DueAt set to leaseUntil and Attempts
	// incremented. A row is claimed by one caller only, until its lease
	// runs out.
	ClaimNotifications(ctx context.Context, channel string, now, leaseUntil time.Time, limit int) ([]*Notification, error)
	// UpdateNotification writes n's State, DueAt and Attempts if the row
	// is still in state from with attempts claims (the claim's fencing
	// token), and reports whether it was.
	UpdateNotification(ctx context.Context, n *Notification, from NotificationState, attempts int) (bool, error)
	// Notification returns the row with id, with its interaction, or
	// ENOTFOUND.
	Notification(ctx context.Context, id string) (*Notification, error)
	// UseNotification sets the row's UsedAt to now unless it is set, and
	// reports whether it did: a link is used once.
	UseNotification(ctx context.Context, id string, now time.Time) (bool, error)
}

// UnnotifiedFilter is a page of a channel's sweep for the pending
// interactions it has not scheduled.
type UnnotifiedFilter struct {
	Channel string
	// After continues a sweep after this interaction (the last of the
	// previous page), so that a sweep reads each pending interaction once
	// however many it leaves without a row; nil starts at the oldest.
	After *Interaction
	// Workflow keeps only the interactions that carry a workflow (where
	// escalation steps are kept).
	Workflow bool
	// Limit is the page size; 0 means MaxListLimit.
	Limit int
}
