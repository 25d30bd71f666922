package hitl

import (
	"fmt"
	"time"
)

// ClaimMode says what a claim does to others' answers.
type ClaimMode string

// Claim modes.
const (
	// ClaimShared shows who is on it; others may still answer. It is
	// what a claim does when the question names no mode, but naming it
	// says the question is meant to be claimed (the inbox offers it).
	ClaimShared ClaimMode = "shared"
	// ClaimExclusive refuses others' answers while the claim holds.
	ClaimExclusive ClaimMode = "exclusive"
)

// Claim durations: how long a claim holds unless the request says.
const (
	DefaultClaimTTL = 15 * time.Minute
	MaxClaimTTL     = 24 * time.Hour
)

// Claim is a person saying "I've got this" about a pending interaction,
// until ExpiresAt or until released.
type Claim struct {
	By        string    `json:"by"`
	Channel   string    `json:"channel"`
	At        time.Time `json:"at"`
	ExpiresAt time.Time `json:"expires_at"`
}

// setClaimMode validates the request's claim mode. A handoff that names
// none is exclusive: the person who takes the conversation holds it, and
// nobody replies over them.
func (in *Interaction) setClaimMode(m ClaimMode) error {
	if m == "" && in.Type == TypeHandoff {
		m = ClaimExclusive
	}
	switch m {
	case "", ClaimShared, ClaimExclusive:
		in.ClaimMode = m
		return nil
	}
	return Errorf(EINVALID, "claim must be shared or exclusive; got %q", m)
}

// ClaimedAt returns in's claim if it holds at now, else nil.
func (in *Interaction) ClaimedAt(now time.Time) *Claim {
	if in.Claim == nil || !now.Before(in.Claim.ExpiresAt) {
		return nil
	}
	return in.Claim
}

// CheckClaim returns nil when the person named by may answer in at now
// as far as claims go: ECONFLICT when someone else holds an exclusive
// claim.
func (in *Interaction) CheckClaim(by string, now time.Time) error {
	c := in.ClaimedAt(now)
	if in.ClaimMode != ClaimExclusive || c == nil || c.By == by {
		return nil
	}
	return Errorf(ECONFLICT, "%s is on it (claimed until %s); only they may answer until then", c.By, c.ExpiresAt.Format(time.RFC3339))
}

// ClaimChange is a claim, its renewal by the person holding it, or its
// release (TTL 0).
type ClaimChange struct {
	By      string
	Channel string
	// Admin lets the change release another's claim.
	Admin bool
	// TTL is how long the claim holds; 0 releases it.
	TTL time.Duration
}

// ApplyClaim changes in's claim at now (in must be pending) and returns
// the event that records it, without its Seq. Claiming what someone else
// holds is ECONFLICT; releasing what is not one's own (unless admin), or
// what nobody holds, too.
func (in *Interaction) ApplyClaim(ch ClaimChange, now time.Time) (*Event, error) {
	now = now.UTC().Truncate(time.Millisecond) // as stores keep times
	cur := in.ClaimedAt(now)
	ev := &Event{InteractionID: in.ID, At: now, Actor: ch.By, Channel: ch.Channel}
	if ch.TTL <= 0 {
		switch {
		case cur == nil:
			return nil, Errorf(ECONFLICT, "nobody has claimed this question")
		case cur.By != ch.By && !ch.Admin:
			return nil, Errorf(ECONFLICT, "%s has claimed this question; only they (or an admin) may release it", cur.By)
		}
		in.Claim = nil
		ev.Type, ev.Detail = EventReleased, cur.By
		return ev, nil
	}
	if cur != nil && cur.By != ch.By {
		return nil, Errorf(ECONFLICT, "%s is already on it (claimed until %s)", cur.By, cur.ExpiresAt.Format(time.RFC3339))
	}
	if ch.TTL > MaxClaimTTL {
		return nil, Errorf(EINVALID, "a claim holds at most %s", MaxClaimTTL)
	}
	in.Claim = &Claim{By: ch.By, Channel: ch.Channel, At: now, ExpiresAt: now.Add(ch.TTL).Truncate(time.Millisecond)}
	ev.Type, ev.Detail = EventClaimed, in.Claim.ExpiresAt.Format(time.RFC3339)
	return ev, nil
}

// Describe says who is on it, for people: "alice is on it".
func (c *Claim) Describe() string {
	return fmt.Sprintf("%s is on it", c.By)
}
