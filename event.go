package hitl

import "time"

// EventType names what happened to an interaction.
type EventType string

// Event types. The log is append-only; each event has a monotonic Seq.
const (
	EventCreated   EventType = "created"
	EventAnswered  EventType = "answered"
	EventExpired   EventType = "expired"
	EventCancelled EventType = "cancelled"
	EventNotified  EventType = "notified" // a person was told on some channel
	// A person's vote on an interaction decided by consensus: Actor and
	// Channel say who and where, Detail the value of an approval or a
	// choice (nothing of a form or free text).
	EventVoted EventType = "voted"
	// A person claimed a pending interaction (Detail: until when, RFC
	// 3339) or released the claim (Detail: whose claim it was).
	EventClaimed  EventType = "claimed"
	EventReleased EventType = "released"
	// Rule events: Detail is the rule's ID; InteractionID is the
	// interaction whose answer made the rule for rule_created (empty for
	// one made through the rules API), and empty for rule_revoked.
	EventRuleCreated EventType = "rule_created"
	EventRuleRevoked EventType = "rule_revoked"
)

// Event is one entry of the append-only event log: the audit trail and the
// source of live streams.
type Event struct {
	Seq           int64     `json:"seq"`
	Type          EventType `json:"type"`
	InteractionID string    `json:"interaction_id"`
	At            time.Time `json:"at"`
	Actor         string    `json:"actor,omitempty"`   // who caused it; empty for the system
	Channel       string    `json:"channel,omitempty"` // through which channel
	Detail        string    `json:"detail,omitempty"`  // e.g. the cancel reason; never an answer value

	// Interaction is the interaction's state when the event is read (its
	// question fields never change, its status may have moved on); nil
	// for an event of no interaction (a rule's).
	Interaction *Interaction `json:"-"`
	// Next is an event appended in the same transaction right after this
	// one, such as the rule_created event of an answer that made a rule;
	// nil when there is none. Only the store call that wrote both sets it.
	Next *Event `json:"-"`
}
