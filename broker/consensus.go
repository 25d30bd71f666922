package broker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/hitl-sh/hitl"
)

// counted reports whether answers to in go through the store's
// ChangePending rather than a plain compare-and-set: votes of a voting
// consensus, and answers that an exclusive claim may refuse (the claim is
// checked in the same transaction as the answer).
func counted(in *hitl.Interaction) bool {
	return in.Consensus.Voting() || in.ClaimMode == hitl.ClaimExclusive
}

// countAnswer records t, the caller's valid answer to the pending in, as
// a vote (or, with only an exclusive claim to respect, as the answer).
// The interaction stays pending until the consensus decides; then the
// same transaction resolves it. A second vote by the same person is a
// conflict, unless it repeats the first with its idempotency key.
func (b *Broker) countAnswer(ctx context.Context, in *hitl.Interaction, t hitl.Transition) (*hitl.Interaction, error) {
	var electorate []string
	if in.Consensus.Voting() {
		var err error
		if electorate, err = b.electorate(ctx, in); err != nil {
			return nil, err
		}
	}
	out, ev, err := b.store.ChangePending(ctx, in.ID, t.At, hitl.Ballot{Answer: &t, Electorate: electorate, At: t.At}.Change())
	caller := hitl.CallerFrom(ctx)
	switch {
	case errors.Is(err, hitl.ErrAlreadyVoted):
		if sameVote(out, caller, t.Value, t.IdempotencyKey) {
			return out, nil
		}
		return out, hitl.Errorf(hitl.ECONFLICT, "you already answered: %s", out.VoteBy(caller.Name).Describe(out))
	case errors.Is(err, hitl.ErrNotPending):
		return b.answeredBefore(ctx, out, t.Value, t.IdempotencyKey)
	case errors.Is(err, hitl.ErrPastDeadline):
		return b.lateAnswer(ctx, out)
	case err != nil:
		return nil, fmt.Errorf("respond: %w", err)
	}
	b.changed(ev)
	if out.Status == hitl.StatusPending {
		b.log.Info("vote recorded", "interaction_id", in.ID, "by", caller.Name, "channel", caller.Channel, "votes", len(out.Votes), "needed", out.VotesNeeded)
	} else {
		b.log.Info("interaction decided", "interaction_id", in.ID, "status", string(out.Status), "by", caller.Name, "channel", caller.Channel, "votes", len(out.Votes))
	}
	return out, nil
}

// sameVote reports whether caller voted value (as normalised) on in with
// the non-empty idempotency key: the retry of a vote whose reply was lost.
func sameVote(in *hitl.Interaction, caller hitl.Caller, value []byte, key string) bool {
	v := in.VoteBy(caller.Name)
	return key != "" && v != nil && v.Key == key && bytes.Equal(v.Value, value)
}

// changed streams a chain of events a store change appended (a vote or a
// claim, then the resolution it made, then a rule it made); the
// resolution wakes the interaction's waiters.
func (b *Broker) changed(ev *hitl.Event) {
	for ; ev != nil; ev = ev.Next {
		switch ev.Type {
		case hitl.EventAnswered, hitl.EventExpired, hitl.EventCancelled:
			b.resolved(ev)
		default:
			b.recent.put(ev)
			b.feed.publish(ev)
		}
	}
}

// electorate returns the names of the people who may vote on in (see
// hitl.Interaction.Eligible): the users, and the tokens of responders
// and admins, that its targets include (all of them when it has none),
// less the requester when excluded. Without users or tokens (the local
// mode) it is the local caller.
func (b *Broker) electorate(ctx context.Context, in *hitl.Interaction) ([]string, error) {
	var names []string
	add := func(a hitl.Audience) {
		if in.Eligible(a) && !slices.Contains(names, a.User) {
			names = append(names, a.User)
		}
	}
	ids, ok := b.store.(hitl.Identities)
	if ok {
		has, err := ids.HasIdentities(ctx)
		if err != nil {
			return nil, fmt.Errorf("count votes: %w", err)
		}
		ok = has
	}
	if !ok {
		add(hitl.Audience{User: hitl.LocalCaller})
		return names, nil
	}
	users, err := ids.Users(ctx)
	if err != nil {
		return nil, fmt.Errorf("count votes: %w", err)
	}
	for _, u := range hitl.ActiveUsers(users) {
		add(hitl.Audience{User: u.Name, Groups: u.Groups})
	}
	tokens, err := ids.Tokens(ctx)
	if err != nil {
		return nil, fmt.Errorf("count votes: %w", err)
	}
	for _, t := range tokens {
		if t.Role == hitl.RoleResponder || t.Role == hitl.RoleAdmin {
			add(hitl.Audience{User: t.Name, Groups: t.Groups})
		}
	}
	return names, nil
}

// openCount sets how many votes the new interaction in needs, from its
// electorate now, and returns the transition that ends it at once when
// its rule cannot be met (an electorate smaller than the quorum, say),
// or nil.
func (b *Broker) openCount(ctx context.Context, in *hitl.Interaction) (*hitl.Transition, error) {
	if !in.Consensus.Voting() {
		return nil, nil
	}
	electorate, err := b.electorate(ctx, in)
	if err != nil {
		return nil, err
	}
	return in.Tally(electorate, in.CreatedAt), nil
}

// Recount counts the votes on the pending interaction id again, against
// its electorate now: a target who was removed no longer counts, so the
// rule may now decide, or be out of reach. It does nothing to an
// interaction without a voting consensus, or when nothing changed.
func (b *Broker) Recount(ctx context.Context, id string) (*hitl.Interaction, error) {
	in, err := b.store.Interaction(ctx, id)
	if err != nil {
		return nil, err
	}
	if in.Status != hitl.StatusPending || !in.Consensus.Voting() {
		return in, nil
	}
	electorate, err := b.electorate(ctx, in)
	if err != nil {
		return nil, err
	}
	probe := *in
	if t := probe.Tally(electorate, b.now()); t == nil && probe.VotesNeeded == in.VotesNeeded {
		return in, nil
	}
	out, ev, err := b.store.ChangePending(ctx, id, b.now(), hitl.Ballot{Electorate: electorate, At: b.now()}.Change())
	switch {
	case errors.Is(err, hitl.ErrNotPending), errors.Is(err, hitl.ErrPastDeadline):
		return out, nil
	case err != nil:
		return nil, fmt.Errorf("recount: %w", err)
	}
	if ev != nil {
		b.changed(ev)
		b.log.Info("interaction decided on recount", "interaction_id", id, "status", string(out.Status))
	}
	return out, nil
}

// sameVoteValue is sameVote for an answer that arrives after the
// interaction ended: value is normalised first.
func sameVoteValue(in *hitl.Interaction, caller hitl.Caller, value []byte, key string) bool {
	if key == "" || in.VoteBy(caller.Name) == nil {
		return false
	}
	v, err := normalizedValue(in, value)
	return err == nil && sameVote(in, caller, v, key)
}

// endUnreachable ends in, just created, whose consensus cannot be met
// (see openCount), as t says.
func (b *Broker) endUnreachable(ctx context.Context, in *hitl.Interaction, t hitl.Transition) (*hitl.Interaction, bool, error) {
	t.From = in
	out, ev, err := b.store.Resolve(ctx, in.ID, t)
	if errors.Is(err, hitl.ErrNotPending) {
		return out, true, nil
	} else if err != nil {
		return nil, false, fmt.Errorf("create interaction: %w", err)
	}
	b.resolved(ev)
	b.log.Info("interaction ended as created: its consensus cannot be met", "interaction_id", in.ID, "status", string(out.Status))
	return out, true, nil
}
