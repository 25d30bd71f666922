package broker

import (
	"context"

	"github.com/hitl-sh/hitl"
)

// Authorization. Every Service method checks the caller in its context
// against the rules in the root package (hitl.CanSee and friends), so the
// HTTP API, MCP and any other channel get the same answers:
//
//   - An interaction the caller may not see is reported as not found, by
//     Get, Wait and Cancel alike, so its existence is not given away.
//   - Refusals that depend only on the role (a responder asking or
//     cancelling, an agent answering) are checked before the interaction
//     is looked up, so they say nothing about whether it exists.
//   - Answering or claiming an interaction the caller may not see (a
//     responder it does not target) is not found as well. A 403 is given
//     only to a caller who may see the interaction but not act on it (its
//     requester, when the requester is excluded from answering).

// visible returns the interaction with id, as the store has it, if the
// caller in ctx may see it, and ENOTFOUND otherwise.
func (b *Broker) visible(ctx context.Context, id string) (*hitl.Interaction, error) {
	in, err := b.store.Interaction(ctx, id)
	return seeable(ctx, id, in, err)
}

// visibleRecent is visible through lookup: for waits, which are woken by
// any later change, and for checks of fields that never change.
func (b *Broker) visibleRecent(ctx context.Context, id string) (*hitl.Interaction, error) {
	in, err := b.lookup(ctx, id)
	return seeable(ctx, id, in, err)
}

// lookup returns the interaction with id as of the newest event this
// broker has seen of it (see recent), or else as the store has it.
func (b *Broker) lookup(ctx context.Context, id string) (*hitl.Interaction, error) {
	if in := b.recent.get(id); in != nil {
		return in, nil
	}
	return b.store.Interaction(ctx, id)
}

// seeable returns in, or err, or ENOTFOUND when the caller in ctx may not
// see in.
func seeable(ctx context.Context, id string, in *hitl.Interaction, err error) (*hitl.Interaction, error) {
	if err != nil {
		return nil, err
	}
	if !hitl.CanSee(hitl.CallerFrom(ctx), in) {
		return nil, notFound(id)
	}
	return in, nil
}

// notFound is the error for an interaction that does not exist or that the
// caller may not see: the same as the store's.
func notFound(id string) error {
	return hitl.Errorf(hitl.ENOTFOUND, "interaction %q not found", id)
}

// Answerable returns the interaction with id if the caller in ctx may
// answer it (whatever its status), or the error Respond would give: 403
// for an agent, or for its requester when the requester may not answer
// (see hitl.CanVote); 404 when it does not exist or the caller may not
// see it (a responder it does not target). Compatibility routes use it to
// check a request against the interaction before answering.
//
// The state comes from lookup, so an answer recorded a moment ago, by
// another process, may not show yet: the answer's compare-and-set is what
// decides, and it reports such an answer as a conflict.
func (b *Broker) Answerable(ctx context.Context, id string) (*hitl.Interaction, error) {
	c := hitl.CallerFrom(ctx)
	if err := hitl.CanRespond(c); err != nil {
		return nil, err
	}
	in, err := b.lookup(ctx, id)
	in, err = seeable(ctx, id, in, err)
	if err != nil {
		return nil, err
	}
	if err := hitl.CanAnswer(c, in); err != nil {
		return nil, err
	}
	if err := hitl.CanVote(c, in); err != nil {
		return nil, err
	}
	return in, nil
}
