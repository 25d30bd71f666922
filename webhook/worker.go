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
		if wait, ok := s.due.Skip(s.now(), idleRecheck); ok {
			return wait
		}
	}
	s.due.Forget()
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
	s.due.Looked(now, next, ok)
	if !ok {
		return idleRecheck
	}
	if wait := next.Sub(now); wait > 0 {
		return min(wait, idleRecheck)
	}
	return skippedRecheck // due, but claimed by another replica a moment ago
}
