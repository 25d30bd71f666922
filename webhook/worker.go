package webhook

import (
	"context"
	"time"

	"github.com/hitl-sh/hitl/internal/worker"
)

// run is the worker: one timer, armed at the earliest delivery due, and
// woken early by new events.
func (s *Service) run() {
	worker.Loop(func() time.Duration {
		wait := s.step()
		if s.stepDone != nil {
			s.stepDone()
		}
		return wait
	}, s.kick, s.closed)
}

// due is what the worker knows of the deliveries due: when it last
// claimed them and asked the store for the next due time, and that time.
// Between two such looks, events that make no delivery row (most events,
// on most servers) cost the store nothing more than reading them: rows
// this worker writes are claimed at once, rows another replica writes are
// claimed by that replica's worker (and, were it to crash first, here at
// the next look), and retries come due at a time the worker's timer was
// armed at, here or on the replica that rescheduled them.
type due struct {
	known   bool      // checked and next hold; false forces a look
	checked time.Time // the last look
	next    time.Time // the earliest due delivery then; zero for none
}

// skip reports whether a step may leave the store's due deliveries
// alone until wait has passed: nothing was written since the last look,
// nothing is due yet, and the last look is recent enough.
func (d *due) skip(now time.Time) (wait time.Duration, ok bool) {
	if !d.known {
		return 0, false
	}
	until := d.checked.Add(idleRecheck)
	if !d.next.IsZero() && d.next.Before(until) {
		until = d.next
	}
	if !now.Before(until) {
		return 0, false
	}
	return until.Sub(now), true
}

// step enqueues the new events, sends what is due, and returns how long
// to sleep.
func (s *Service) step() time.Duration {
	ctx, cancel := context.WithTimeout(s.ctx, 2*lease)
	defer cancel()
	wrote := s.cursor.stored
	for {
		more, err := s.enqueue(ctx)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Error("enqueue webhook deliveries", "error", err)
			}
			return retryAfterError
		}
		if !more {
			break
		}
	}
	if s.cursor.stored == wrote {
		if wait, ok := s.due.skip(s.now()); ok {
			return wait
		}
	}
	s.due.known = false
	if err := s.workDue(ctx); err != nil {
		if ctx.Err() == nil {
			s.log.Error("send webhook deliveries", "error", err)
		}
		return retryAfterError
	}
	next, ok, err := s.store.NextWebhookDue(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("read next webhook due time", "error", err)
		}
		return retryAfterError
	}
	now := s.now()
	if !ok {
		s.due = due{known: true, checked: now}
		return idleRecheck
	}
	if wait := next.Sub(now); wait > 0 {
		s.due = due{known: true, checked: now, next: next}
		return min(wait, idleRecheck)
	}
	return skippedRecheck // due, but claimed by another replica a moment ago
}
