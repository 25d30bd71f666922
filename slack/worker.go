package slack

import (
	"context"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/slack-go/slack"
)

// The worker: one goroutine, one timer. It schedules a row for each new
// interaction, moves the rows of ended ones on, and claims and works on
// the rows that are due (posting or updating their messages), then sleeps
// until the earliest row is due, or until new events wake it.

// dueCache remembers the earliest due time the worker read from the store,
// moved earlier by the rows it schedules itself, so that a step woken by
// a new interaction does not claim (a write) when nothing can be due.
type dueCache struct {
	known bool      // at and none reflect the store
	none  bool      // no row has work
	at    time.Time // the earliest due time
}

// wait is how long to sleep before the earliest row is due: idleRecheck
// with none, skippedRecheck when one is due already (held by another
// replica; look again soon).
func (d *dueCache) wait(now time.Time) time.Duration {
	switch {
	case d.none:
		return idleRecheck
	case !d.at.After(now):
		return skippedRecheck
	}
	return min(d.at.Sub(now), idleRecheck)
}

// note records a row due at t.
func (d *dueCache) note(t time.Time) {
	if d.known && (d.none || t.Before(d.at)) {
		d.at, d.none = t, false
	}
}

// run is the worker: one timer, armed at the earliest row due.
func (s *Service) run() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	fired := true
	for {
		wait := s.step(fired)
		if s.stepDone != nil {
			s.stepDone()
		}
		timer.Reset(wait)
		select {
		case <-timer.C:
			fired = true // time to look at the store again, whatever happened
		case <-s.intake.Kicks():
			timer.Stop()
			fired = false
		case <-s.closed:
			return
		}
	}
}

// step does everything that is due and returns how long to sleep. fired
// says the timer woke it (rather than new events).
func (s *Service) step(fired bool) time.Duration {
	ctx, cancel := context.WithTimeout(s.ctx, 2*lease)
	defer cancel()
	s.reload(ctx)
	cfg, api := s.client()

	s.mu.Lock()
	refresh := s.refresh || fired
	s.refresh = false
	s.mu.Unlock()
	queue, sweep := s.intake.Take()
	if refresh || sweep {
		s.due.known, s.replyDue.known = false, false
	}

	var created []*hitl.Interaction
	ended := map[string]bool{}
	for _, ev := range queue {
		if ev.Type == hitl.EventCreated {
			created = append(created, ev.Interaction)
		} else {
			ended[ev.InteractionID] = true
		}
	}
	if err := s.housekeep(ctx, cfg, created, ended, sweep); err != nil {
		if ctx.Err() == nil {
			s.log.Error("schedule Slack messages", "error", err)
		}
		s.intake.Sweep() // try again from the store, which has everything
		s.due.known = false
		return retryAfterError
	}
	if !cfg.usable() || api == nil {
		return idleRecheck
	}
	if !s.due.known || !s.due.none && !s.due.at.After(s.now()) {
		if err := s.workDue(ctx, cfg, api); err != nil {
			if ctx.Err() == nil {
				s.log.Error("work on due Slack messages", "error", err)
			}
			s.due.known = false
			return retryAfterError
		}
		next, ok, err := s.store.NextSlackDue(ctx)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Error("read next Slack due time", "error", err)
			}
			s.due.known = false
			return retryAfterError
		}
		s.due = dueCache{known: true, none: !ok, at: next}
	}
	if err := s.stepReplies(ctx, api); err != nil {
		if ctx.Err() == nil {
			s.log.Error("post due Slack escalation replies", "error", err)
		}
		s.replyDue.known = false
		return retryAfterError
	}
	now := s.now()
	return min(s.due.wait(now), s.replyDue.wait(now))
}

// stepReplies posts the escalation replies due (see workReminders) when
// some may be, and reads when the next one is.
func (s *Service) stepReplies(ctx context.Context, api *slack.Client) error {
	if s.notes == nil {
		s.replyDue = dueCache{known: true, none: true}
		return nil
	}
	if s.replyDue.known && (s.replyDue.none || s.replyDue.at.After(s.now())) {
		return nil
	}
	if err := s.workReminders(ctx, api); err != nil {
		return err
	}
	next, ok, err := s.notes.NextNotificationDue(ctx, hitl.ChannelSlackReminder)
	if err != nil {
		return err
	}
	s.replyDue = dueCache{known: true, none: !ok, at: next}
	return nil
}

// reload reads the stored configuration again now and then, so that a
// change saved through another replica takes effect here too.
func (s *Service) reload(ctx context.Context) {
	s.mu.Lock()
	stale := s.now().Sub(s.loadedAt) >= configRecheck
	s.mu.Unlock()
	if !stale {
		return
	}
	cfg, err := s.effective(ctx)
	if err == nil {
		err = cfg.validate()
	}
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	cur, _ := s.client()
	switch {
	case err != nil:
		s.log.Error("read Slack configuration", "error", hitl.ErrorMessage(err))
		s.mu.Lock()
		s.loadedAt = s.now()
		s.mu.Unlock()
	case cfg != cur:
		s.applyLocked(cfg)
	default:
		s.mu.Lock()
		s.loadedAt = s.now()
		s.mu.Unlock()
	}
}

// housekeep schedules rows for new interactions (or, on a sweep, for every
// pending interaction without one) and moves the rows of ended
// interactions on.
func (s *Service) housekeep(ctx context.Context, cfg Config, created []*hitl.Interaction, ended map[string]bool, sweep bool) error {
	if !cfg.usable() {
		// Nothing is posted or updated; a sweep catches up once Slack is
		// on again.
		return nil
	}
	if len(created) > 0 {
		rows := s.rows(cfg, created)
		if _, err := s.store.ScheduleSlackMessages(ctx, rows); err != nil {
			return err
		}
		for _, m := range rows {
			if m.State == hitl.SlackScheduled {
				s.due.note(m.DueAt)
			}
		}
	}
	now := s.now()
	if len(ended) > endedSweep {
		sweep = true // one pass over the waiting rows beats one write each
	} else {
		for id := range ended {
			n, err := s.store.EndSlackMessages(ctx, id, now)
			if err != nil {
				return err
			}
			if n > 0 {
				s.due.note(now)
			}
		}
	}
	if !sweep {
		return nil
	}
	s.due.known = false
	for {
		list, err := s.store.UnscheduledSlackInteractions(ctx, scheduleBatch)
		if err != nil {
			return err
		}
		if _, err := s.store.ScheduleSlackMessages(ctx, s.rows(cfg, list)); err != nil {
			return err
		}
		if len(list) < scheduleBatch {
			break
		}
	}
	_, err := s.store.EndSlackMessages(ctx, "", now)
	return err
}

// rows returns the scheduled rows of new interactions: due after the
// agent's delay or the configured one, or skipped when the agent turned
// Slack off.
func (s *Service) rows(cfg Config, list []*hitl.Interaction) []*hitl.SlackMessage {
	now := s.now()
	out := make([]*hitl.SlackMessage, 0, len(list))
	for _, in := range list {
		m := &hitl.SlackMessage{InteractionID: in.ID, State: hitl.SlackScheduled, CreatedAt: now}
		delay, channel := in.SlackSettings()
		d := cfg.DelaySeconds
		if delay != nil {
			d = *delay
		}
		m.DueAt = in.CreatedAt.Add(time.Duration(d) * time.Second)
		m.ChannelID = channel
		if in.SlackOff() {
			m.State, m.DueAt, m.ChannelID = hitl.SlackSkipped, time.Time{}, ""
		}
		out = append(out, m)
	}
	return out
}

// workDue claims the rows due now and works on each: post, or update.
func (s *Service) workDue(ctx context.Context, cfg Config, api *slack.Client) error {
	for {
		now := s.now()
		ms, err := s.store.ClaimSlackMessages(ctx, now, now.Add(lease), claimBatch)
		if err != nil {
			return err
		}
		for _, m := range ms {
			switch m.State {
			case hitl.SlackPosting:
				s.post(ctx, cfg, api, m)
			case hitl.SlackUpdating:
				s.update(ctx, api, m)
			}
		}
		if len(ms) < claimBatch || ctx.Err() != nil {
			return ctx.Err()
		}
	}
}
