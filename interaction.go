// Package hitl is the domain of a human-in-the-loop server: interactions
// (questions from agents to people), their answers, the event log, and the
// interfaces the engine and its stores implement.
package hitl

import (
	"encoding/json"
	"time"
)

// Type is the kind of answer an interaction expects.
type Type string

// The interaction types; TypeAction is in action.go and TypeHandoff in
// handoff.go.
const (
	TypeApproval     Type = "approval"      // value: true or false
	TypeSingleChoice Type = "single_choice" // value: one option key
	TypeMultiChoice  Type = "multi_choice"  // value: array of option keys
	TypeForm         Type = "form"          // value: object valid against form_schema
	TypeFreeText     Type = "free_text"     // value: string
)

// Valid reports whether t is one of the seven types.
func (t Type) Valid() bool {
	switch t {
	case TypeApproval, TypeSingleChoice, TypeMultiChoice, TypeForm, TypeFreeText, TypeAction, TypeHandoff:
		return true
	}
	return false
}

// Status is where an interaction is in its life: pending, then exactly one
// terminal status.
type Status string

// Statuses.
const (
	StatusPending   Status = "pending"
	StatusAnswered  Status = "answered"
	StatusExpired   Status = "expired"
	StatusCancelled Status = "cancelled"
)

// Valid reports whether s is a known status.
func (s Status) Valid() bool {
	switch s {
	case StatusPending, StatusAnswered, StatusExpired, StatusCancelled:
		return true
	}
	return false
}

// Terminal reports whether s is final.
func (s Status) Terminal() bool {
	return s == StatusAnswered || s == StatusExpired || s == StatusCancelled
}

// CancelledByAgent is the reason of a cancel that gives none: the agent
// withdrew its question (or its caller's context ended while it waited).
const CancelledByAgent = "agent_cancelled"

// OnTimeout is what happens when the deadline passes while still pending.
type OnTimeout string

// Timeout policies.
const (
	OnTimeoutCancel  OnTimeout = "cancel"  // status becomes expired (fail closed)
	OnTimeoutDefault OnTimeout = "default" // answered with default_response, timed_out
)

// Option is one choice, with a stable key the answer refers to.
type Option struct {
	Key         string `json:"key"`
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

// Result is the outcome of a terminal interaction.
type Result struct {
	Value       json.RawMessage `json:"value,omitempty"`
	RespondedBy string          `json:"responded_by,omitempty"`
	Channel     string          `json:"channel,omitempty"`
	RespondedAt time.Time       `json:"responded_at"`
	TimedOut    bool            `json:"timed_out"`
	Reason      string          `json:"reason,omitempty"` // why it was cancelled or expired
	// IdempotencyKey is the key the answer was sent with (see
	// Transition.IdempotencyKey). It is not part of the wire format.
	IdempotencyKey string `json:"-"`
	// ArgsDiff is, for an action whose arguments the person edited, the
	// RFC 6902 JSON Patch from the proposed arguments to the edited ones.
	ArgsDiff json.RawMessage `json:"args_diff,omitempty"`
	// RuleID names the rule that decided an action without a person.
	RuleID string `json:"rule_id,omitempty"`
	// Receipt is, for an approved action, the signed receipt the tool can
	// check before it runs the call (see ReceiptClaims).
	Receipt string `json:"receipt,omitempty"`
	// Votes are the votes that decided an interaction with a consensus
	// (see Consensus), in the order cast.
	Votes []Vote `json:"votes,omitempty"`
}

// Interaction is one question from one agent to one or more people.
type Interaction struct {
	ID         string          `json:"interaction_id"`
	Type       Type            `json:"interaction_type"`
	Question   string          `json:"question"`
	Context    string          `json:"context,omitempty"`
	Options    []Option        `json:"options"`
	FormSchema json.RawMessage `json:"form_schema,omitempty"`
	// Action, ArgsSchema, Decisions and RejectRequiresMessage are set for
	// an action only (see ActionReview).
	Action                *Action         `json:"action,omitempty"`
	ArgsSchema            json.RawMessage `json:"args_schema,omitempty"`
	Decisions             []Decision      `json:"decisions,omitempty"`
	RejectRequiresMessage bool            `json:"reject_requires_message,omitempty"`
	DefaultResponse       json.RawMessage `json:"default_response,omitempty"`
	Timeout               float64         `json:"timeout"` // seconds from creation to deadline
	Deadline              time.Time       `json:"deadline"`
	OnTimeout             OnTimeout       `json:"on_timeout"`
	IdempotencyKey        string          `json:"idempotency_key,omitempty"`
	SourceAgent           string          `json:"source_agent,omitempty"`
	SessionID             string          `json:"session_id,omitempty"`
	Metadata              map[string]any  `json:"metadata,omitempty"`
	Targets               *Targets        `json:"targets,omitempty"`
	Notify                *Notify         `json:"notify,omitempty"`
	// CallbackURL is POSTed the interaction, signed, once it ends.
	CallbackURL string `json:"callback_url,omitempty"`
	// Consensus, OnBehalfOf, Votes, VotesNeeded and Claim are who decides
	// and how (see consensus.go, vote.go and claim.go).
	Consensus   *Consensus `json:"consensus,omitempty"`
	OnBehalfOf  string     `json:"on_behalf_of,omitempty"`
	Votes       []Vote     `json:"votes,omitempty"`
	VotesNeeded int        `json:"votes_needed,omitempty"`
	ClaimMode   ClaimMode  `json:"claim,omitempty"`
	Claim       *Claim     `json:"claimed,omitempty"`
	// Escalation is the question's escalation steps, and EscalatedSteps
	// the indexes of those that fired, in the order they did.
	Escalation     []EscalationStep `json:"escalation,omitempty"`
	EscalatedSteps []int            `json:"escalated_steps,omitempty"`
	CreatedBy      string           `json:"created_by"`
	CreatedVia     string           `json:"created_via"`
	CreatedAt      time.Time        `json:"created_at"`
	Status         Status           `json:"status"`
	Result         *Result          `json:"result,omitempty"`
	RequestHash    string           `json:"-"` // fingerprint of the question, for idempotency
}

// Targets restricts who may see and answer an interaction; empty means anyone.
type Targets struct {
	Users  []string `json:"users,omitempty"`
	Groups []string `json:"groups,omitempty"`
}

// Option returns the option with the given key.
func (in *Interaction) Option(key string) (Option, bool) {
	for _, o := range in.Options {
		if o.Key == key {
			return o, true
		}
	}
	return Option{}, false
}

// Expired reports whether the deadline has passed at now.
func (in *Interaction) Expired(now time.Time) bool {
	return !in.Deadline.IsZero() && !now.Before(in.Deadline)
}
