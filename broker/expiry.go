package broker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hitl-sh/hitl"
)

const (
	// expiryBatch is how many due interactions are expired per store read.
	expiryBatch = 100
	// idleRecheck bounds how long the timer sleeps with nothing scheduled,
	// in case another process added a deadline to a shared store.
	idleRecheck = time.Minute
	// retryAfterError is how long the timer waits after a store error.
	retryAfterError = time.Second
	// skippedRecheck is how soon the timer looks again at a deadline that
	// is due but was being resolved elsewhere.
	skippedRecheck = 50 * time.Millisecond
)

// expiry drives deadlines with one timer set to the earliest pending
// deadline in the store, not a goroutine per interaction.
type expiry struct {
	b    *Broker
	kick chan struct{} // an earlier deadline was created

	mu   sync.Mutex
	next time.Time // when the timer will fire; zero if unknown
}

func newExpiry(b *Broker) *expiry {
	return &expiry{b: b, kick: make(chan struct{}, 1)}
}

// scheduled tells the timer about a new deadline; it wakes only when the
// deadline is earlier than the one it sleeps towards.
func (x *expiry) scheduled(deadline time.Time) {
	x.mu.Lock()
	earlier := x.next.IsZero() || deadline.Before(x.next)
	if earlier {
		x.next = deadline
	}
	x.mu.Unlock()
	if earlier {
		select {
		case x.kick <- struct{}{}:
		default:
		}
	}
}

func (x *expiry) run() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		wait := x.step()
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-x.kick:
			timer.Stop() // Go 1.23+ timers: no stale value survives Stop or Reset
		case <-x.b.closed:
			return
		}
	}
}

// step expires what is due and returns how long to sleep.
func (x *expiry) step() time.Duration {
	// Until the next deadline is read, any deadline scheduled may be
	// earlier than it, and must kick the timer: the kick makes the run loop
	// step again. (Without this, a question asked while step ran, after
	// its read, was left until idleRecheck.)
	x.mu.Lock()
	x.next = time.Time{}
	x.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := x.expireDue(ctx); err != nil {
		x.b.log.Error("expire due interactions", "error", err)
		return retryAfterError
	}
	next, ok, err := x.b.store.NextDeadline(ctx)
	if err != nil {
		x.b.log.Error("read next deadline", "error", err)
		return retryAfterError
	}
	now := x.b.now()
	wait := idleRecheck
	switch {
	case ok && !next.After(now):
		// Still due after expireDue: another process sharing the store is
		// resolving it right now (the store skipped it). Look again soon,
		// rather than spin.
		wait = skippedRecheck
	case ok:
		wait = min(next.Sub(now), idleRecheck)
	}
	x.mu.Lock()
	x.next = now.Add(wait)
	if ok && next.Before(x.next) {
		x.next = next
	}
	x.mu.Unlock()
	return wait
}

// expireDue expires every pending interaction whose deadline has passed.
func (x *expiry) expireDue(ctx context.Context) error {
	for {
		due, err := x.b.store.DueInteractions(ctx, x.b.now(), expiryBatch)
		if err != nil {
			return err
		}
		for _, in := range due {
			if _, err := x.expireOne(ctx, in); err != nil {
				return err
			}
		}
		if len(due) < expiryBatch {
			return nil
		}
	}
}

// expireOne applies the timeout policy to one interaction: expired, or
// answered with the default response. It returns the interaction's state
// afterwards, whoever made the transition.
func (x *expiry) expireOne(ctx context.Context, in *hitl.Interaction) (*hitl.Interaction, error) {
	t := hitl.Transition{Status: hitl.StatusExpired, Via: hitl.ChannelTimeout, At: x.b.now(), Reason: "timeout", From: in}
	if in.OnTimeout == hitl.OnTimeoutDefault && len(in.DefaultResponse) > 0 {
		t = defaultTransition(in, t.At)
	}
	out, ev, err := x.b.store.Resolve(ctx, in.ID, t)
	if errors.Is(err, hitl.ErrNotPending) {
		return out, nil
	} else if err != nil {
		return nil, fmt.Errorf("expire interaction %s: %w", in.ID, err)
	}
	x.b.resolved(ev)
	x.b.log.Info("interaction expired", "interaction_id", in.ID, "on_timeout", string(in.OnTimeout))
	return out, nil
}
