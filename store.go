package hitl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Store keeps interactions and the event log durably. Every method that
// changes an interaction appends its event in the same transaction.
type Store interface {
	// CreateInteraction inserts a pending interaction and its created event.
	// An interaction already answered (Status answered with its Result, as
	// when a rule decides an action as it is asked) is inserted answered,
	// and its answered event (actor RespondedBy, channel Channel, at
	// RespondedAt) follows the created one in the same transaction: the
	// created event's Next. No reader ever sees it pending.
	// When in.IdempotencyKey is set and (CreatedBy, IdempotencyKey) already
	// exists, nothing is written and the existing interaction is returned
	// with existed true (the caller decides whether it is the same question).
	CreateInteraction(ctx context.Context, in *Interaction) (got *Interaction, ev *Event, existed bool, err error)

	// Interaction returns one interaction, or an ENOTFOUND error.
	Interaction(ctx context.Context, id string) (*Interaction, error)

	// ListInteractions returns interactions in f's order (newest first by
	// default), and the cursor of the next page ("" when there is none).
	ListInteractions(ctx context.Context, f ListFilter) ([]*Interaction, string, error)

	// CountMatching counts the interactions f selects (its Cursor, Limit
	// and Sort aside): in all, per agent, per type, and those whose
	// deadline is at or before soon. See InteractionCounts.
	CountMatching(ctx context.Context, f ListFilter, soon time.Time) (*InteractionCounts, error)

	// CountInteractions counts interactions with the given status.
	CountInteractions(ctx context.Context, status Status) (int, error)

	// CountPending counts the pending interactions (see PendingCounts)
	// and returns the sequence numbers of the events after after, all
	// read in one snapshot of the store: a reader that has seen every
	// event up to after can then count the events it is told of later
	// exactly once (see broker's pending counts).
	CountPending(ctx context.Context, after int64) (*PendingCounts, error)

	// CountDue counts the interactions f selects (its Cursor, Limit and
	// Sort aside) whose deadline is at or before soon.
	CountDue(ctx context.Context, f ListFilter, soon time.Time) (int, error)

	// Resolve moves a pending interaction to a terminal status with res, as a
	// compare-and-set, and appends the matching event. When the interaction
	// is no longer pending it returns the current interaction and
	// ErrNotPending. A person's answer (StatusAnswered, not TimedOut) only
	// succeeds while t.At is before the deadline; otherwise it returns the
	// current interaction and ErrPastDeadline.
	Resolve(ctx context.Context, id string, t Transition) (*Interaction, *Event, error)

	// NextDeadline returns the earliest deadline among pending interactions.
	NextDeadline(ctx context.Context) (deadline time.Time, ok bool, err error)

	// DueInteractions returns up to limit pending interactions whose
	// deadline is at or before now, earliest first.
	DueInteractions(ctx context.Context, now time.Time, limit int) ([]*Interaction, error)

	// AppendEvent appends an event that does not change the status (such as
	// notified) and returns it with its sequence number.
	AppendEvent(ctx context.Context, ev *Event) (*Event, error)

	// Events returns up to limit events with Seq > after, in order, each
	// with its Interaction filled in.
	Events(ctx context.Context, after int64, limit int) ([]*Event, error)

	// InteractionEvents returns up to limit events of interaction id with
	// Seq > after, in order: its timeline (created, notified, answered,
	// the rule its answer made, …). Their Interaction is left nil (the
	// caller has it). An unknown id has no events. A limit of 0 or less
	// means MaxListLimit.
	InteractionEvents(ctx context.Context, id string, after int64, limit int) ([]*Event, error)

	// LastEventSeq returns the sequence number of the newest event (0 if none).
	LastEventSeq(ctx context.Context) (int64, error)

	// PurgeEnded deletes one batch of interactions that ended (answered,
	// expired or cancelled) before p.EndedBefore, oldest created first,
	// with every row that belongs to them (their events, Slack message
	// and action rows): see Purge. The interaction of the newest event is
	// always kept, so that LastEventSeq never goes back and sequence
	// numbers are never used twice. Pending interactions are never
	// touched. Several processes may purge one store at once: each
	// interaction is deleted by one of them.
	PurgeEnded(ctx context.Context, p Purge) (*Purged, error)

	// PurgedThrough returns the highest sequence number of an event that
	// PurgeEnded deleted (0 if none): the log may have holes up to it. A
	// reader resuming from before it may have missed events (such as the
	// end of a question it shows) and must start over from what is
	// pending. It only grows, and survives a restart.
	PurgedThrough(ctx context.Context) (int64, error)
	// RuleStore keeps the rules that decide actions without a person.
	RuleStore
	// ChangeStore records votes and claims.
	ChangeStore

	// Ping reports whether the store can serve requests.
	Ping(ctx context.Context) error

	// Close releases the store's resources.
	Close() error
}

// EventListener is implemented by a Store that several processes share,
// so that each learns of the events the others commit (PostgreSQL does it
// with LISTEN/NOTIFY). The engine uses it when its store has it, and then
// reads those events from the log.
type EventListener interface {
	// ListenEvents calls fn with a sequence number upTo each time the log
	// can be read further: every event with Seq <= upTo that will ever
	// exist is committed, so a number missing below upTo never appears.
	// upTo only grows, from above after. It reconnects and catches up when
	// its connection drops, and returns nil when ctx ends. fn must not
	// block.
	ListenEvents(ctx context.Context, after int64, fn func(upTo int64)) error
}

// Transition describes a move out of pending.
type Transition struct {
	Status Status    // answered, expired or cancelled
	Value  []byte    // the canonical answer, for answered
	By     string    // who: a person, an agent, or "" for the system
	Via    string    // channel
	At     time.Time // when
	Reason string    // why, for expired and cancelled
	// TimedOut marks the default response applied at the deadline.
	TimedOut bool
	// IdempotencyKey is the key a person's answer was sent with (the
	// Idempotency-Key header), kept with the result so that a retry of
	// the same answer is recognised, after a restart too; "" for none.
	IdempotencyKey string
	// ArgsDiff and RuleID go into the result of an action's answer (see
	// Result).
	ArgsDiff []byte
	RuleID   string
	// Detail, when set, is the event's detail instead of Reason (an
	// edit's patch, or the rule an answer made).
	Detail string
	// Rule, when set, is a rule the answer makes ("approve, and always
	// allow this"): the store inserts it in the same transaction and
	// appends its rule_created event after the answered one (the returned
	// event's Next), with the rule's InteractionID.
	Rule *Rule
	// From, if not nil, is the interaction as the caller last read it while
	// pending. Pending, an interaction is as it was created, so a store may
	// build the resolved interaction from it rather than read the row back;
	// it must still make the compare-and-set, and report the row as it is
	// when that fails.
	From *Interaction
}

// Result returns the result this transition records.
func (t Transition) Result() *Result {
	return &Result{Value: json.RawMessage(t.Value), RespondedBy: t.By, Channel: t.Via, RespondedAt: t.At.UTC(), TimedOut: t.TimedOut, Reason: t.Reason,
		IdempotencyKey: t.IdempotencyKey, ArgsDiff: json.RawMessage(t.ArgsDiff), RuleID: t.RuleID}
}

// EventDetail returns the detail of the event t appends: Detail, or else
// Reason.
func (t Transition) EventDetail() string {
	if t.Detail != "" {
		return t.Detail
	}
	return t.Reason
}

// Pending returns t.From when it is the pending interaction id (what a
// store may build its result from), and nil otherwise.
func (t Transition) Pending(id string) *Interaction {
	if t.From == nil || t.From.ID != id || t.From.Status != StatusPending {
		return nil
	}
	return t.From
}

// Applied returns from, a pending interaction, as a store reads it back
// after t: with t's status and result (t.At as the store keeps it). The
// answer value is copied.
func (t Transition) Applied(from *Interaction) *Interaction {
	out := *from
	out.Status = t.Status
	out.Result = &Result{RespondedBy: t.By, Channel: t.Via, RespondedAt: t.At.UTC(), TimedOut: t.TimedOut, Reason: t.Reason, IdempotencyKey: t.IdempotencyKey, RuleID: t.RuleID}
	if t.Value != nil {
		out.Result.Value = json.RawMessage(bytes.Clone(t.Value))
	}
	if t.ArgsDiff != nil {
		out.Result.ArgsDiff = json.RawMessage(bytes.Clone(t.ArgsDiff))
	}
	if len(from.Votes) > 0 {
		out.Result.Votes = from.Votes
	}
	return &out
}

// EventType returns the event this transition appends.
func (t Transition) EventType() EventType {
	switch t.Status {
	case StatusAnswered:
		return EventAnswered
	case StatusExpired:
		return EventExpired
	default:
		return EventCancelled
	}
}

// Errors a Store returns from Resolve; the engine turns them into
// application errors that say who answered first.
var (
	ErrNotPending   = errors.New("interaction is not pending")
	ErrPastDeadline = errors.New("interaction deadline has passed")
)

// ListFilter selects interactions to list.
type ListFilter struct {
	Status         Status // "" for any
	IdempotencyKey string // "" for any
	CreatedBy      string // "" for any
	Limit          int    // 1..500; 0 means 50
	Cursor         string // from a previous page; only valid with the same Sort
	// Agents, Types and Channels keep interactions whose source_agent,
	// interaction_type or answering channel is any of the values given
	// (none: any).
	Agents   []string
	Types    []Type
	Channels []string
	// Query keeps interactions whose question or context contains it,
	// ignoring case ("" for any).
	Query string
	// SessionID keeps the interactions of that session ("" for any).
	SessionID string
	// Project keeps the interactions whose Project is that directory
	// ("" for any).
	Project string
	// Workflow keeps the interactions that carry a workflow: a voting
	// consensus, on_behalf_of, a claim mode or a claim (the engine's
	// recount; not offered by the HTTP API).
	Workflow bool
	// Sort is the order: SortNewest ("", the default) or SortDeadline.
	Sort ListSort
	// VisibleTo, when set, keeps only the interactions that audience may
	// see: untargeted ones and those whose targets name its user or one
	// of its groups.
	VisibleTo *Audience
}

// DefaultListLimit and MaxListLimit bound a page.
const (
	DefaultListLimit = 50
	MaxListLimit     = 500
)

// Service is what agents and people use, implemented by the in-process
// engine and by the HTTP client alike.
type Service interface {
	// Create asks a question; created is false when an idempotent repeat
	// returned the existing interaction.
	Create(ctx context.Context, req CreateRequest) (in *Interaction, created bool, err error)
	// Get returns an interaction.
	Get(ctx context.Context, id string) (*Interaction, error)
	// List returns a page of interactions, newest first.
	List(ctx context.Context, f ListFilter) (list []*Interaction, next string, err error)
	// Wait blocks until the interaction is terminal or ctx ends; then it
	// returns ctx's error.
	Wait(ctx context.Context, id string) (*Interaction, error)
	// Respond answers a pending interaction.
	Respond(ctx context.Context, id string, value json.RawMessage) (*Interaction, error)
	// Cancel withdraws a pending interaction.
	Cancel(ctx context.Context, id string, reason string) (*Interaction, error)
}
