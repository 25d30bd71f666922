package slack

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/slack-go/slack"
)

// Escalation replies: a fired step that tells Slack replies in the thread
// of the posted message, also sent to the channel, that the question
// still waits ("⏰ Reminder") or whom it now asks too ("⬆️ Escalated to
// …"). The engine writes each reply's row (hitl.ChannelSlackReminder)
// with the step's event, and the worker claims the rows as it claims the
// messages', so a reply is posted once the step fired, however the
// process that fired it ended. A message not posted yet is left to its
// post, which comes later and tells everyone.

// escalationEvent reports whether ev is a fired step that tells Slack,
// whose reply row the worker should look for now.
func escalationEvent(ev *hitl.Event) bool {
	if ev.Type != hitl.EventReminded && ev.Type != hitl.EventEscalated {
		return false
	}
	d, err := hitl.ParseEscalationDetail(ev)
	return err == nil && d.Tells(hitl.ChannelSlack)
}

// workReminders claims the reply rows due now and posts each.
func (s *Service) workReminders(ctx context.Context, api *slack.Client) error {
	for {
		now := s.now()
		rows, err := s.notes.ClaimNotifications(ctx, hitl.ChannelSlackReminder, now, now.Add(lease), claimBatch)
		if err != nil {
			return err
		}
		for _, n := range rows {
			s.remind(ctx, api, n)
		}
		if len(rows) < claimBatch || ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// remind posts the reply of a claimed row in the thread of its
// interaction's message, and records it; nothing when the interaction
// ended or its message was not posted.
func (s *Service) remind(ctx context.Context, api *slack.Client, n *hitl.Notification) {
	in := n.Interaction
	if in == nil || in.Status != hitl.StatusPending || in.SlackOff() {
		s.settle(ctx, n, hitl.NotificationSkipped, time.Time{})
		return
	}
	m, err := s.store.SlackMessage(ctx, in.ID)
	switch {
	case hitl.ErrorCode(err) == hitl.ENOTFOUND || err == nil && m.State != hitl.SlackPosted:
		s.settle(ctx, n, hitl.NotificationSkipped, time.Time{})
		return
	case err != nil:
		s.retryReminder(ctx, n, fmt.Errorf("read the Slack message: %w", err))
		return
	}
	if _, _, err := api.PostMessageContext(ctx, m.ChannelID, slack.MsgOptionText(reminderText(in.StepDetail(n.Round)), false),
		slack.MsgOptionTS(m.TS), slack.MsgOptionBroadcast()); err != nil {
		s.retryReminder(ctx, n, fmt.Errorf("post a reply in channel %s: %w", m.ChannelID, err))
		return
	}
	s.settle(ctx, n, hitl.NotificationSent, time.Time{})
	s.log.Info("reminded on Slack", "interaction_id", in.ID, "channel_id", m.ChannelID, "step", n.Round)
	if _, err := s.b.AppendEvent(ctx, &hitl.Event{
		Type: hitl.EventNotified, InteractionID: in.ID, Channel: hitl.ChannelSlack,
		Detail: "reminder posted to Slack channel " + m.ChannelID,
	}); err != nil {
		s.log.Error("record the Slack reminder", "interaction_id", in.ID, "error", err)
	}
}

// retryReminder puts a claimed reply row back to wait after a backoff, or
// Slack's Retry-After, or gives it up, as retry does a message's row.
func (s *Service) retryReminder(ctx context.Context, n *hitl.Notification, err error) {
	if ctx.Err() != nil {
		return // shutting down: the lease runs out and the row is taken up again
	}
	var rl *slack.RateLimitedError
	var se slack.SlackErrorResponse
	switch {
	case errors.As(err, &rl):
		s.log.Warn("Slack is rate limiting; trying the reply again later", "interaction_id", n.InteractionID, "retry_after", rl.RetryAfter)
		s.settleKeep(ctx, n, s.now().Add(max(rl.RetryAfter, time.Second)))
		return
	case errors.As(err, &se) && permanent[se.Err], n.Attempts >= maxAttempts:
		s.log.Error("gave up on a Slack reply", "interaction_id", n.InteractionID, "step", n.Round, "attempts", n.Attempts, "error", err)
		s.settle(ctx, n, hitl.NotificationFailed, time.Time{})
		return
	}
	wait := backoff[min(max(n.Attempts, 1), len(backoff))-1]
	s.log.Warn("Slack reply failed; trying again later", "interaction_id", n.InteractionID, "step", n.Round, "attempts", n.Attempts, "retry_in", wait, "error", err)
	s.settleKeep(ctx, n, s.now().Add(wait))
}

// settle moves a claimed reply row to state, resetting its attempts.
func (s *Service) settle(ctx context.Context, n *hitl.Notification, state hitl.NotificationState, due time.Time) {
	next := *n
	next.State, next.DueAt, next.Attempts = state, due, 0
	s.writeReminder(ctx, n, &next)
}

// settleKeep puts a claimed reply row back to wait until due, keeping its
// attempts (a retry).
func (s *Service) settleKeep(ctx context.Context, n *hitl.Notification, due time.Time) {
	next := *n
	next.State, next.DueAt = hitl.NotificationScheduled, due
	s.writeReminder(ctx, n, &next)
}

func (s *Service) writeReminder(ctx context.Context, n, next *hitl.Notification) {
	ok, err := s.notes.UpdateNotification(ctx, next, n.State, n.Attempts)
	if err != nil {
		s.log.Error("update a Slack reply row", "interaction_id", n.InteractionID, "error", err)
	} else if !ok {
		s.log.Warn("a Slack reply row moved on while this server held it", "interaction_id", n.InteractionID)
	}
}

// reminderText is the reply of step d.
func reminderText(d hitl.EscalationDetail) string {
	if d.Added == nil {
		return "⏰ Reminder: this question is still waiting for an answer."
	}
	var who []string
	for _, g := range d.Added.Groups {
		who = append(who, escape("@"+g))
	}
	for _, u := range d.Added.Users {
		who = append(who, escape(u))
	}
	return "⬆️ Escalated to " + strings.Join(who, ", ") + ": this question is still waiting for an answer."
}
