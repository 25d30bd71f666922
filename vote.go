package hitl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Vote is one person's answer to an interaction decided by consensus.
type Vote struct {
	By      string          `json:"by"`
	Value   json.RawMessage `json:"value"`
	Channel string          `json:"channel"`
	At      time.Time       `json:"at"`
	// Key is the idempotency key the vote was sent with; not part of the
	// wire format.
	Key string `json:"-"`
}

// ErrAlreadyVoted is returned by a store's CastVote when the person has
// voted on the interaction before.
var ErrAlreadyVoted = fmt.Errorf("already voted")

// Ballot is an answer to count (nil to count again what is there, as
// when the electorate changed) and who may vote now.
type Ballot struct {
	// Answer is the person's answer, as it would resolve the interaction
	// on its own.
	Answer *Transition
	// Electorate names the eligible people (see Interaction.Eligible);
	// those who voted count whether or not they are still in it.
	Electorate []string
	At         time.Time
}

// Change returns the PendingChange that counts b. An exclusive claim
// held by someone else refuses the answer (ECONFLICT). Without a voting
// consensus (only an exclusive claim needs the count), the answer
// resolves the interaction as it is. Otherwise it is a vote, refused with
// ErrAlreadyVoted when the person has voted, and the votes are counted
// (see Tally).
func (b Ballot) Change() PendingChange {
	return func(in *Interaction) (*Change, error) {
		var ev *Event
		if t := b.Answer; t != nil {
			if err := in.CheckClaim(t.By, b.At); err != nil {
				return nil, err
			}
			if !in.Consensus.Voting() {
				return &Change{Resolve: t}, nil
			}
			if in.VoteBy(t.By) != nil {
				return nil, ErrAlreadyVoted
			}
			v := Vote{By: t.By, Value: bytes.Clone(t.Value), Channel: t.Via, At: t.At.UTC().Truncate(time.Millisecond), Key: t.IdempotencyKey}
			in.Votes = append(in.Votes, v)
			ev = &Event{Type: EventVoted, InteractionID: in.ID, At: v.At, Actor: v.By, Channel: v.Channel, Detail: v.EventDetail(in)}
		}
		if !in.Consensus.Voting() {
			return &Change{}, nil
		}
		return &Change{Event: ev, Resolve: in.Tally(b.Electorate, b.At)}, nil
	}
}

// Describe says what v answered, for people: "approved", "rejected", the
// chosen options' labels, or "answered" for forms and free text (which
// may be secrets).
func (v *Vote) Describe(in *Interaction) string {
	switch in.Type {
	case TypeApproval:
		if string(v.Value) == "true" {
			return "approved"
		}
		return "rejected"
	case TypeSingleChoice, TypeMultiChoice:
		var labels []string
		for _, k := range voteKeys(v.Value) {
			if o, ok := in.Option(k); ok {
				k = o.Label
			}
			labels = append(labels, k)
		}
		return "chose " + strings.Join(labels, ", ")
	}
	return "answered"
}

// EventDetail is what a voted event records of v: the value of an
// approval or a choice, nothing of a form or free text.
func (v *Vote) EventDetail(in *Interaction) string {
	switch in.Type {
	case TypeApproval, TypeSingleChoice, TypeMultiChoice:
		return string(v.Value)
	}
	return ""
}

// voteKeys returns the option keys of a choice's value, sorted.
func voteKeys(value json.RawMessage) []string {
	var one string
	if json.Unmarshal(value, &one) == nil {
		return []string{one}
	}
	var keys []string
	_ = json.Unmarshal(value, &keys)
	slices.Sort(keys)
	return keys
}

// ballotKey is what makes two votes alike: the value, with a multiple
// choice's keys in order.
func ballotKey(in *Interaction, value json.RawMessage) string {
	if in.Type == TypeMultiChoice {
		return strings.Join(voteKeys(value), "\x00")
	}
	return string(value)
}

// Tally counts in's votes against its consensus and the electorate (see
// Ballot) at time at. It sets in.VotesNeeded, and returns the transition
// that ends in when the rule has decided, or nil while it still waits.
// An approval that cannot be approved any more ends answered false, with
// the reason; other types, cancelled with the reason.
func (in *Interaction) Tally(electorate []string, at time.Time) *Transition {
	c := in.Consensus
	voters := map[string]bool{}
	for _, v := range in.Votes {
		voters[v.By] = true
	}
	left, size := 0, len(voters)
	for _, p := range electorate {
		if !voters[p] {
			left++
			size++
		}
	}
	var need int
	switch c.Mode {
	case ModeFirst:
		need = 1
	case ModeAll:
		need = size
	case ModeMajority:
		need = size/2 + 1
	case ModeQuorum:
		need = c.Required
	}
	in.VotesNeeded = need
	if in.Type == TypeApproval {
		return in.tallyApproval(need, left, at)
	}
	return in.tallyAnswers(need, left, at)
}

// tallyApproval decides an approval: need approvals, or a reject when
// they can no longer come (or at once, with a veto).
func (in *Interaction) tallyApproval(need, left int, at time.Time) *Transition {
	var yes, no []string
	for _, v := range in.Votes {
		if string(v.Value) == "true" {
			yes = append(yes, v.By)
		} else {
			no = append(no, v.By)
		}
	}
	c := in.Consensus
	switch {
	case c.Veto && len(no) > 0:
		return in.ended(true, json.RawMessage("false"), fmt.Sprintf("vetoed by %s", no[0]), at)
	case c.Mode == ModeFirst && len(in.Votes) > 0:
		return in.ended(false, in.Votes[0].Value, "", at)
	case c.Mode == ModeAll && len(no) > 0:
		return in.ended(true, json.RawMessage("false"), fmt.Sprintf("rejected by %s; every approval was needed", strings.Join(no, ", ")), at)
	case need > 0 && len(yes) >= need:
		return in.ended(false, json.RawMessage("true"), "", at)
	case len(yes)+left < need || need == 0:
		return in.ended(true, json.RawMessage("false"), in.unreachable(need, len(yes), len(no), left), at)
	}
	return nil
}

// tallyAnswers decides a choice, a form or free text: need alike answers
// (for all, every one; a form's or free text's answers are never alike,
// and all of them make the value, in the order given).
func (in *Interaction) tallyAnswers(need, left int, at time.Time) *Transition {
	c := in.Consensus
	if len(in.Votes) > 0 && c.Mode == ModeFirst {
		return in.ended(false, in.Votes[0].Value, "", at)
	}
	if c.Mode == ModeAll && (in.Type == TypeForm || in.Type == TypeFreeText || in.Type == TypeHandoff) {
		if need > 0 && left == 0 {
			values := make([]json.RawMessage, len(in.Votes))
			for i, v := range in.Votes {
				values[i] = v.Value
			}
			b, _ := json.Marshal(values)
			return in.ended(false, b, "", at)
		}
		if need == 0 {
			return in.ended(true, nil, in.unreachable(need, 0, 0, left), at)
		}
		return nil
	}
	counts := map[string]int{}
	best, bestKey := 0, ""
	for _, v := range in.Votes {
		k := ballotKey(in, v.Value)
		counts[k]++
		if counts[k] > best {
			best, bestKey = counts[k], k
		}
	}
	if c.Mode == ModeAll && len(counts) > 1 {
		return in.ended(true, nil, "people answered differently; everyone had to agree", at)
	}
	if need > 0 && best >= need {
		for _, v := range in.Votes {
			if ballotKey(in, v.Value) == bestKey {
				return in.ended(false, v.Value, "", at)
			}
		}
	}
	if best+left < need || need == 0 {
		return in.ended(true, nil, in.unreachable(need, best, len(in.Votes)-best, left), at)
	}
	return nil
}

// unreachable says why the rule can no longer be met.
func (in *Interaction) unreachable(need, agree, against, left int) string {
	c := in.Consensus
	what := "alike answers"
	if in.Type == TypeApproval {
		what = "approvals"
	}
	rule := fmt.Sprintf("%s needed %d %s", c.Mode, need, what)
	if c.Mode == ModeQuorum {
		rule = fmt.Sprintf("a quorum of %d %s was needed", need, what)
	}
	if need == 0 || agree+against+left < need {
		return fmt.Sprintf("consensus cannot be reached: %s, and only %d people may answer", rule, agree+against+left)
	}
	return fmt.Sprintf("consensus cannot be reached: %s; %d answered otherwise and %d may still answer", rule, against, left)
}

// ended is the transition that ends in: answered with value, by the
// last vote's person and channel; or, when failed and value is nil,
// cancelled, with reason either way.
func (in *Interaction) ended(failed bool, value json.RawMessage, reason string, at time.Time) *Transition {
	t := &Transition{Status: StatusAnswered, Value: bytes.Clone(value), At: at, Reason: reason}
	if n := len(in.Votes); n > 0 {
		t.By, t.Via = in.Votes[n-1].By, in.Votes[n-1].Channel
	}
	if failed && value == nil {
		t.Status = StatusCancelled
	}
	return t
}
