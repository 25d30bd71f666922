package hitl

import (
	"encoding/json"
	"slices"
)

// Mode is how the votes of several people decide an interaction.
type Mode string

// Consensus modes.
const (
	ModeFirst    Mode = "first"    // the first answer decides (the default)
	ModeAll      Mode = "all"      // every eligible person must answer alike
	ModeMajority Mode = "majority" // more than half of the eligible people
	ModeQuorum   Mode = "quorum"   // Required people answer alike
)

// MaxQuorum bounds consensus.required: as many people as targets may name.
const MaxQuorum = 2 * MaxTargets

// Consensus says how an interaction is decided when several people may
// answer it: each eligible person votes once, and the interaction stays
// pending until the rule decides (see Tally).
type Consensus struct {
	Mode Mode `json:"mode"`
	// Required is how many alike answers a quorum needs.
	Required int `json:"required,omitempty"`
	// Veto ends an approval rejected at the first reject.
	Veto bool `json:"veto,omitempty"`
	// ExcludeRequester keeps the requester (see Interaction.Requester)
	// from voting. Left out, it is true when the question was asked on
	// someone's behalf (on_behalf_of), else false.
	ExcludeRequester *bool `json:"exclude_requester,omitempty"`
}

// Voting reports whether c decides by counting votes: any mode but first.
func (c *Consensus) Voting() bool {
	return c != nil && c.Mode != ModeFirst
}

// setConsensus validates the request's consensus and on_behalf_of for in's
// type. A first-mode consensus that changes nothing is dropped, so such
// a question is stored, fingerprinted and shown as before consensus
// existed.
func (in *Interaction) setConsensus(c *Consensus, onBehalfOf string) error {
	onBehalfOf, err := CleanOnBehalfOf(onBehalfOf)
	if err != nil {
		return err
	}
	in.OnBehalfOf = onBehalfOf
	if c == nil {
		if onBehalfOf == "" {
			return nil
		}
		c = &Consensus{Mode: ModeFirst}
	}
	out := *c
	if out.Mode == "" {
		out.Mode = ModeFirst
	}
	switch out.Mode {
	case ModeFirst, ModeAll, ModeMajority:
		if out.Required != 0 {
			return Errorf(EINVALID, "consensus.required is only for mode quorum")
		}
	case ModeQuorum:
		if out.Required < 1 || out.Required > MaxQuorum {
			return Errorf(EINVALID, "consensus mode quorum needs required between 1 and %d", MaxQuorum)
		}
	default:
		return Errorf(EINVALID, "consensus.mode must be first, all, majority or quorum; got %q", c.Mode)
	}
	if out.Veto && in.Type != TypeApproval {
		return Errorf(EINVALID, "consensus.veto is only for approvals")
	}
	switch in.Type {
	case TypeForm, TypeFreeText, TypeHandoff:
		if out.Mode == ModeMajority || out.Mode == ModeQuorum {
			return Errorf(EINVALID, "consensus mode %s counts alike answers, which a %s does not have: use first or all", out.Mode, in.Type)
		}
	case TypeAction:
		if out.Mode != ModeFirst {
			return Errorf(EINVALID, "consensus mode %s is not supported for actions: ask an approval instead", out.Mode)
		}
	}
	if out.ExcludeRequester == nil {
		v := onBehalfOf != ""
		out.ExcludeRequester = &v
	}
	if out.Mode == ModeFirst && !out.Veto && !*out.ExcludeRequester {
		return nil
	}
	in.Consensus = &out
	return nil
}

// Requester is the person the interaction was asked for: on_behalf_of
// when given, else the caller that asked.
func (in *Interaction) Requester() string {
	if in.OnBehalfOf != "" {
		return in.OnBehalfOf
	}
	return in.CreatedBy
}

// ExcludesRequester reports whether the requester may not answer.
func (in *Interaction) ExcludesRequester() bool {
	c := in.Consensus
	return c != nil && c.ExcludeRequester != nil && *c.ExcludeRequester
}

// CanVote returns nil when c, who may answer in (CanAnswer), may also
// vote on it: not its requester when the requester is excluded. (Voting
// twice is refused by the count itself: see Ballot.)
func CanVote(c Caller, in *Interaction) error {
	if in.ExcludesRequester() && c.Name == in.Requester() {
		return Errorf(EFORBIDDEN, "forbidden: %s asked this question and may not answer it", c.Name)
	}
	return nil
}

// VoteBy returns the vote of the person named by, or nil.
func (in *Interaction) VoteBy(by string) *Vote {
	i := slices.IndexFunc(in.Votes, func(v Vote) bool { return v.By == by })
	if i < 0 {
		return nil
	}
	return &in.Votes[i]
}

// Eligible reports whether a person with the audience a may vote on in:
// targeted by it, and not the excluded requester. The electorate of a
// count is the people for whom it holds.
func (in *Interaction) Eligible(a Audience) bool {
	if in.ExcludesRequester() && a.User == in.Requester() {
		return false
	}
	return in.Targets.Includes(a)
}

// workflow is how the stores keep the consensus, on_behalf_of and the
// votes: one JSON value (with each vote's idempotency key, which the
// wire format leaves out).
type workflow struct {
	Consensus  *Consensus       `json:"consensus,omitempty"`
	OnBehalfOf string           `json:"on_behalf_of,omitempty"`
	Needed     int              `json:"needed,omitempty"`
	Votes      []storedVote     `json:"votes,omitempty"`
	ClaimMode  ClaimMode        `json:"claim_mode,omitempty"`
	Claim      *Claim           `json:"claim,omitempty"`
	Escalation []EscalationStep `json:"escalation,omitempty"`
	Escalated  []int            `json:"escalated,omitempty"`
}

type storedVote struct {
	Vote
	Key string `json:"key,omitempty"`
}

// WorkflowJSON returns what a store keeps of in's consensus, requester,
// votes and claim, or nil when there is none of them.
func (in *Interaction) WorkflowJSON() []byte {
	if in.Consensus == nil && in.OnBehalfOf == "" && len(in.Votes) == 0 && in.ClaimMode == "" && in.Claim == nil &&
		len(in.Escalation) == 0 {
		return nil
	}
	w := workflow{Consensus: in.Consensus, OnBehalfOf: in.OnBehalfOf, Needed: in.VotesNeeded, ClaimMode: in.ClaimMode, Claim: in.Claim,
		Escalation: in.Escalation, Escalated: in.EscalatedSteps}
	for _, v := range in.Votes {
		w.Votes = append(w.Votes, storedVote{Vote: v, Key: v.Key})
	}
	b, _ := json.Marshal(w) // plain values: cannot fail
	return b
}

// SetWorkflowJSON sets in's consensus, requester, votes and claim from
// what WorkflowJSON returned (nil clears them). A terminal interaction's
// result lists the votes.
func (in *Interaction) SetWorkflowJSON(b []byte) error {
	var w workflow
	if len(b) > 0 {
		if err := json.Unmarshal(b, &w); err != nil {
			return err
		}
	}
	in.Consensus, in.OnBehalfOf, in.VotesNeeded = w.Consensus, w.OnBehalfOf, w.Needed
	in.ClaimMode, in.Claim = w.ClaimMode, w.Claim
	in.Escalation, in.EscalatedSteps = w.Escalation, w.Escalated
	in.Votes = nil
	for _, v := range w.Votes {
		v.Vote.Key = v.Key
		in.Votes = append(in.Votes, v.Vote)
	}
	if in.Result != nil && len(in.Votes) > 0 {
		in.Result.Votes = in.Votes
	}
	return nil
}
