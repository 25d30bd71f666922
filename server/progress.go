package server

import (
	"time"

	"github.com/hitl-sh/hitl"
)

// msgProgress is hitl's addition to the live streams: a pending
// interaction changed without ending (a vote was cast, a claim made or
// released, a step of its escalation reminded people or added some).
const msgProgress = "hitl:progress"

// progressMessage says what changed of a pending interaction and where it
// now stands: every vote so far and its claim (null when none holds).
type progressMessage struct {
	Type          string      `json:"type"`
	InteractionID string      `json:"interaction_id"`
	Event         string      `json:"event"` // voted, claimed, released, reminded or escalated
	By            string      `json:"by"`
	Channel       string      `json:"channel"`
	Votes         []hitl.Vote `json:"votes"`
	VotesNeeded   int         `json:"votes_needed,omitempty"`
	Claimed       *hitl.Claim `json:"claimed"`
	// At and Escalation tell of a reminded or escalated event: when,
	// which step, whom it added, on which channels.
	At         string                 `json:"at,omitempty"`
	Escalation *hitl.EscalationDetail `json:"escalation,omitempty"`
	Targets    *hitl.Targets          `json:"targets,omitempty"`
}

// newProgressMessage renders a voted, claimed or released event. Once the
// interaction has ended (the vote decided it), the message still tells
// of the vote; the resolution's messages follow.
func newProgressMessage(ev *hitl.Event) progressMessage {
	in := ev.Interaction
	votes := in.Votes
	if votes == nil {
		votes = []hitl.Vote{}
	}
	m := progressMessage{Type: msgProgress, InteractionID: in.ID, Event: string(ev.Type), By: ev.Actor, Channel: ev.Channel,
		Votes: votes, VotesNeeded: in.VotesNeeded, Claimed: in.Claim}
	if ev.Type == hitl.EventReminded || ev.Type == hitl.EventEscalated {
		if d, err := hitl.ParseEscalationDetail(ev); err == nil {
			m.Escalation, m.Targets = &d, in.Targets
		}
		m.At = ev.At.UTC().Format(time.RFC3339Nano)
	}
	return m
}

// workflowFields are hitl:question's fields for an interaction decided by
// several people or claimed: absent otherwise, so the contract's message
// stays as it is.
type workflowFields struct {
	Consensus   *hitl.Consensus `json:"consensus,omitempty"`
	OnBehalfOf  string          `json:"on_behalf_of,omitempty"`
	Votes       []hitl.Vote     `json:"votes,omitempty"`
	VotesNeeded int             `json:"votes_needed,omitempty"`
	ClaimMode   hitl.ClaimMode  `json:"claim,omitempty"`
	Claimed     *hitl.Claim     `json:"claimed,omitempty"`
	// Targets say whom the question is for, when it names anyone: the
	// inbox labels a question meant for someone else.
	Targets *hitl.Targets `json:"targets,omitempty"`
}

// newWorkflowFields returns in's workflowFields.
func newWorkflowFields(in *hitl.Interaction) workflowFields {
	return workflowFields{Consensus: in.Consensus, OnBehalfOf: in.OnBehalfOf, Votes: in.Votes, VotesNeeded: in.VotesNeeded,
		ClaimMode: in.ClaimMode, Claimed: in.Claim, Targets: in.Targets}
}
