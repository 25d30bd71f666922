package webpush

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/worker"
)

// The worker: one goroutine, one timer. It schedules a row per
// subscription to be told of each new interaction, then claims the rows
// that are due and pushes them, then sleeps until the earliest row is due
// (a retry) or new interactions wake it.

// run is the worker.
func (s *Service) run() { worker.Loop(s.step, s.intake.Kicks(), s.closed) }

// step does everything that is due and returns how long to sleep.
func (s *Service) step() time.Duration {
	ctx, cancel := context.WithTimeout(s.ctx, 2*lease)
	defer cancel()
	queue, sweep := s.intake.Take()
	s.mu.Lock()
	keys := s.keys
	s.mu.Unlock()
	wrote, err := s.schedule(ctx, queue, sweep)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("schedule pushes", "error", err)
		}
		s.intake.Sweep() // try again from the store, which has everything
		s.due.Forget()
		return retryAfterError
	}
	if !wrote {
		if wait, ok := s.due.Skip(s.now(), idleRecheck); ok {
			return wait
		}
	}
	s.due.Forget()
	if err := s.workDue(ctx, keys); err != nil {
		if ctx.Err() == nil {
			s.log.Error("send due pushes", "error", err)
		}
		return retryAfterError
	}
	next, ok, err := s.store.NextNotificationDue(ctx, hitl.ChannelPush)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("read next push due", "error", err)
		}
		return retryAfterError
	}
	now := s.now()
	s.due.Looked(now, next, ok)
	if !ok {
		return idleRecheck
	}
	return min(max(next.Sub(now), 10*time.Millisecond), idleRecheck)
}

// schedule inserts the rows of new interactions, and on a sweep of every
// pending interaction without one, and reports whether it wrote any.
// While no user has subscribed nothing is written: a server whose people
// never use Web Push keeps no rows for it. (A sweep after the first
// subscription takes up the questions still pending that are meant for
// it, if under maxPushAge.)
func (s *Service) schedule(ctx context.Context, created []*hitl.Interaction, sweep bool) (wrote bool, err error) {
	if len(created) == 0 && !sweep {
		return false, nil
	}
	subs, err := s.subs.PushSubscriptions(ctx, "")
	if err != nil || len(subs) == 0 {
		return false, err
	}
	var groups map[string][]string
	if s.ids != nil {
		if groups, err = userGroups(ctx, s.ids); err != nil {
			return false, err
		}
		if subs = ofUsers(subs, groups); len(subs) == 0 {
			return false, nil
		}
	}
	if len(created) > 0 {
		if _, err := s.store.ScheduleNotifications(ctx, s.rows(created, subs, groups)); err != nil {
			return false, err
		}
		wrote = true
	}
	f := hitl.UnnotifiedFilter{Channel: hitl.ChannelPush, Limit: scheduleBatch}
	for sweep {
		list, err := s.store.UnnotifiedInteractions(ctx, f)
		if err != nil {
			return wrote, err
		}
		if len(list) > 0 {
			if _, err := s.store.ScheduleNotifications(ctx, s.rows(list, subs, groups)); err != nil {
				return wrote, err
			}
			wrote = true
		}
		if sweep = len(list) == scheduleBatch; sweep {
			f.After = list[len(list)-1]
		}
	}
	return wrote, nil
}

// maxPushAge is how old a question may be and still be pushed: a sweep
// after a restart pushes the questions that came while no process ran,
// not every question still waiting from long before someone subscribed.
const maxPushAge = 15 * time.Minute

// rows returns the rows of new interactions: one per subscription to tell,
// due at once (its Recipient the endpoint, its Responder the person); or
// one skipped row with no recipient when there is no one to tell, the
// question is older than maxPushAge, or the agent kept the question out of
// Web Push, so that a sweep does not take it up again.
func (s *Service) rows(list []*hitl.Interaction, subs []*hitl.PushSubscription, groups map[string][]string) []*hitl.Notification {
	now := s.now()
	var out []*hitl.Notification
	for _, in := range list {
		var told []*hitl.PushSubscription
		if !in.PushOff() && in.Status == hitl.StatusPending && now.Sub(in.CreatedAt) < maxPushAge {
			told = subscribers(in, subs, groups)
		}
		if len(told) == 0 {
			out = append(out, &hitl.Notification{
				ID: uuid.NewString(), InteractionID: in.ID, Channel: hitl.ChannelPush,
				State: hitl.NotificationSkipped, CreatedAt: now,
			})
			continue
		}
		for _, sub := range told {
			out = append(out, &hitl.Notification{
				ID: uuid.NewString(), InteractionID: in.ID, Channel: hitl.ChannelPush,
				Recipient: sub.Endpoint, Responder: sub.User, State: hitl.NotificationScheduled,
				DueAt: now, CreatedAt: now,
			})
		}
	}
	return out
}

// subscribers returns the subscriptions told of in: those of the users it
// targets and of the members of the groups it targets; or, when it
// targets no one in particular, those that opted in to such questions.
func subscribers(in *hitl.Interaction, subs []*hitl.PushSubscription, groups map[string][]string) []*hitl.PushSubscription {
	t := in.Targets
	targeted := t != nil && (len(t.Users) > 0 || len(t.Groups) > 0)
	var out []*hitl.PushSubscription
	for _, sub := range subs {
		switch {
		case !targeted && sub.Untargeted,
			targeted && slices.Contains(t.Users, sub.User),
			targeted && slices.ContainsFunc(t.Groups, func(g string) bool { return slices.Contains(groups[sub.User], g) }):
			out = append(out, sub)
		}
	}
	return out
}

// ofUsers returns the subscriptions of the users in groups, once there
// are any: a browser subscribed before login was turned on, or for a
// user since removed, is told nothing.
func ofUsers(subs []*hitl.PushSubscription, groups map[string][]string) []*hitl.PushSubscription {
	if len(groups) == 0 {
		return subs
	}
	return slices.DeleteFunc(subs, func(sub *hitl.PushSubscription) bool {
		_, ok := groups[sub.User]
		return !ok
	})
}

// userGroups returns each user's groups, by name.
func userGroups(ctx context.Context, ids hitl.Identities) (map[string][]string, error) {
	users, err := ids.Users(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]string, len(users))
	for _, u := range users {
		out[u.Name] = u.Groups
	}
	return out, nil
}

// workDue claims the rows due now and pushes each.
func (s *Service) workDue(ctx context.Context, keys vapidKeys) error {
	for {
		now := s.now()
		ns, err := s.store.ClaimNotifications(ctx, hitl.ChannelPush, now, now.Add(lease), claimBatch)
		if err != nil {
			return err
		}
		for _, n := range ns {
			s.deliver(ctx, keys, n)
		}
		if len(ns) < claimBatch || ctx.Err() != nil {
			return ctx.Err()
		}
	}
}
