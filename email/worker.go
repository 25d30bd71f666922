package email

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/worker"
)

// The worker: one goroutine, one timer. It schedules a row per recipient
// of each new interaction, then claims the rows that are due and mails
// them, then sleeps until the earliest row is due or new interactions
// wake it.

// run is the worker.
func (s *Service) run() { worker.Loop(s.step, s.intake.Kicks(), s.closed) }

// step does everything that is due and returns how long to sleep.
func (s *Service) step() time.Duration {
	ctx, cancel := context.WithTimeout(s.ctx, 2*lease)
	defer cancel()
	s.reload(ctx)
	cfg, key := s.config()
	queue, sweep := s.intake.Take()
	if !cfg.usable() {
		return idleRecheck
	}
	if err := s.schedule(ctx, cfg, queue, sweep); err != nil {
		if ctx.Err() == nil {
			s.log.Error("schedule mail", "error", err)
		}
		s.intake.Sweep() // try again from the store, which has everything
		return retryAfterError
	}
	if err := s.workReminders(ctx, cfg); err != nil {
		if ctx.Err() == nil {
			s.log.Error("schedule reminder mails", "error", err)
		}
		return retryAfterError
	}
	if err := s.workDue(ctx, cfg, key); err != nil {
		if ctx.Err() == nil {
			s.log.Error("send due mail", "error", err)
		}
		return retryAfterError
	}
	next, ok, err := s.store.NextNotificationDue(ctx, hitl.ChannelEmail)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("read next mail due", "error", err)
		}
		return retryAfterError
	}
	if !ok {
		return idleRecheck
	}
	return min(max(next.Sub(s.now()), 10*time.Millisecond), idleRecheck)
}

// schedule inserts the rows of new interactions, and on a sweep of every
// pending interaction without one.
func (s *Service) schedule(ctx context.Context, cfg Config, created []*hitl.Interaction, sweep bool) error {
	if len(created) > 0 {
		rows, err := s.rows(ctx, cfg, created)
		if err != nil {
			return err
		}
		if _, err := s.store.ScheduleNotifications(ctx, rows); err != nil {
			return err
		}
	}
	f := hitl.UnnotifiedFilter{Channel: hitl.ChannelEmail, Limit: scheduleBatch}
	for sweep {
		list, err := s.store.UnnotifiedInteractions(ctx, f)
		if err != nil {
			return err
		}
		rows, err := s.rows(ctx, cfg, list)
		if err != nil {
			return err
		}
		if _, err := s.store.ScheduleNotifications(ctx, rows); err != nil {
			return err
		}
		if sweep = len(list) == scheduleBatch; sweep {
			f.After = list[len(list)-1]
		}
	}
	return nil
}

// rows returns the rows of new interactions: one per recipient, due after
// the delay; or one skipped row with no recipient when there is no one to
// mail or the agent kept the question out of email, so that a sweep does
// not take it up again.
func (s *Service) rows(ctx context.Context, cfg Config, list []*hitl.Interaction) ([]*hitl.Notification, error) {
	now := s.now()
	var out []*hitl.Notification
	for _, in := range list {
		var rs []recipient
		if !in.EmailOff() && in.Status == hitl.StatusPending {
			var err error
			if rs, err = recipients(ctx, s.ids, in, cfg); err != nil {
				return nil, err
			}
		}
		if len(rs) == 0 {
			out = append(out, &hitl.Notification{
				ID: uuid.NewString(), InteractionID: in.ID, Channel: hitl.ChannelEmail,
				State: hitl.NotificationSkipped, CreatedAt: now,
			})
			continue
		}
		due := in.CreatedAt.Add(time.Duration(cfg.DelaySeconds) * time.Second)
		for _, r := range rs {
			out = append(out, &hitl.Notification{
				ID: uuid.NewString(), InteractionID: in.ID, Channel: hitl.ChannelEmail,
				Recipient: r.address, Responder: r.user, State: hitl.NotificationScheduled,
				DueAt: due, CreatedAt: now,
			})
		}
	}
	return out, nil
}

// workDue claims the rows due now and mails each.
func (s *Service) workDue(ctx context.Context, cfg Config, key []byte) error {
	snd, err := newSender(cfg, s.tls)
	if err != nil {
		return err
	}
	for {
		now := s.now()
		ns, err := s.store.ClaimNotifications(ctx, hitl.ChannelEmail, now, now.Add(lease), claimBatch)
		if err != nil {
			return err
		}
		for _, n := range ns {
			s.deliver(ctx, snd, key, n)
		}
		if len(ns) < claimBatch || ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// deliver mails a claimed row if its interaction is still pending.
func (s *Service) deliver(ctx context.Context, snd *sender, key []byte, n *hitl.Notification) {
	in := n.Interaction
	if in == nil || in.Status != hitl.StatusPending || in.EmailOff() || in.Expired(s.now()) {
		s.move(ctx, n, hitl.NotificationSkipped, time.Time{}, 0)
		return
	}
	msg, err := s.compose(n, key)
	if err == nil {
		err = snd.send(ctx, msg)
	}
	if err != nil {
		s.retry(ctx, n, err)
		return
	}
	if !s.move(ctx, n, hitl.NotificationSent, time.Time{}, 0) {
		s.log.Warn("a mail was sent after its claim ran out; it may arrive twice", "interaction_id", in.ID)
		return
	}
	who := n.Responder
	if who == "" {
		who = n.Recipient
	}
	s.log.Info("mailed", "interaction_id", in.ID, "to", who)
	if _, err := s.b.AppendEvent(ctx, &hitl.Event{
		Type: hitl.EventNotified, InteractionID: in.ID, Channel: hitl.ChannelEmail, Detail: "emailed " + who,
	}); err != nil {
		s.log.Error("record the email notification", "interaction_id", in.ID, "error", err)
	}
}

// retry puts a claimed row back to wait after a backoff, or gives it up.
func (s *Service) retry(ctx context.Context, n *hitl.Notification, err error) {
	if ctx.Err() != nil {
		return // shutting down: the lease runs out and the row is taken up again
	}
	if permanent(err) || n.Attempts >= maxAttempts {
		s.log.Error("gave up on a mail", "interaction_id", n.InteractionID, "attempts", n.Attempts, "error", err)
		s.move(ctx, n, hitl.NotificationFailed, time.Time{}, 0)
		return
	}
	wait := backoff[min(n.Attempts, len(backoff))-1]
	s.log.Warn("sending a mail failed; trying again later", "interaction_id", n.InteractionID, "attempts", n.Attempts, "retry_in", wait, "error", err)
	s.move(ctx, n, hitl.NotificationScheduled, s.now().Add(wait), n.Attempts)
}

// move sets a claimed row's state and reports whether the claim still
// held.
func (s *Service) move(ctx context.Context, n *hitl.Notification, state hitl.NotificationState, due time.Time, attempts int) bool {
	next := *n
	next.State, next.DueAt, next.Attempts = state, due, attempts
	ok, err := s.store.UpdateNotification(ctx, &next, n.State, n.Attempts)
	if err != nil {
		s.log.Error("update a mail's row", "interaction_id", n.InteractionID, "error", err)
	}
	return ok
}
