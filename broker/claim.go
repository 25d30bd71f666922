package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hitl-sh/hitl"
)

// Claim says the caller is on the pending interaction id ("alice is on
// it") for ttl (0 means the broker's ClaimTTL), or renews their claim.
// Whoever may answer it may claim it; a claim someone else holds is a
// conflict. With claim "exclusive", others' answers are refused until the
// claim is released or expires. The claim is a claimed event.
func (b *Broker) Claim(ctx context.Context, id string, ttl time.Duration) (*hitl.Interaction, error) {
	if ttl == 0 {
		ttl = b.claimTTL
	}
	if ttl < time.Second {
		return nil, hitl.Errorf(hitl.EINVALID, "a claim holds at least a second")
	}
	return b.changeClaim(ctx, id, ttl)
}

// Release ends the caller's claim on the pending interaction id (an
// admin may end anyone's). It is a released event.
func (b *Broker) Release(ctx context.Context, id string) (*hitl.Interaction, error) {
	return b.changeClaim(ctx, id, 0)
}

// changeClaim claims (ttl > 0) or releases id for the caller.
func (b *Broker) changeClaim(ctx context.Context, id string, ttl time.Duration) (*hitl.Interaction, error) {
	in, err := b.Answerable(ctx, id)
	if err != nil {
		return nil, err
	}
	if in.Status != hitl.StatusPending {
		return in, notPending(in)
	}
	c := hitl.CallerFrom(ctx)
	ch := hitl.ClaimChange{By: c.Name, Channel: c.Channel, Admin: c.Role == hitl.RoleAdmin || c.Role == "", TTL: ttl}
	now := b.now()
	out, ev, err := b.store.ChangePending(ctx, id, now, func(in *hitl.Interaction) (*hitl.Change, error) {
		ev, err := in.ApplyClaim(ch, now)
		return &hitl.Change{Event: ev}, err
	})
	switch {
	case errors.Is(err, hitl.ErrNotPending):
		return out, notPending(out)
	case errors.Is(err, hitl.ErrPastDeadline):
		return b.lateAnswer(ctx, out)
	case err != nil:
		return nil, fmt.Errorf("claim: %w", err)
	}
	b.changed(ev)
	b.log.Info("claim changed", "interaction_id", id, "event", string(ev.Type), "by", c.Name, "channel", c.Channel)
	return out, nil
}
