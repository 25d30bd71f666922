package slack

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/slack-go/slack"
)

// maxAttempts is how many times a row is tried before it is given up.
const maxAttempts = 6

// backoff is the wait before each retry.
var backoff = []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute}

// permanent lists Slack errors that retrying cannot fix.
var permanent = map[string]bool{
	"channel_not_found": true, "not_in_channel": true, "is_archived": true,
	"invalid_auth": true, "not_authed": true, "account_inactive": true, "token_revoked": true,
	"missing_scope": true, "invalid_blocks": true, "invalid_blocks_format": true,
	"message_not_found": true, "cant_update_message": true, "edit_window_closed": true,
	"restricted_action": true,
}

// post posts a claimed row's message if its interaction is still pending,
// records where, and logs a notified event. If the interaction ended first
// it posts nothing.
func (s *Service) post(ctx context.Context, cfg Config, api *slack.Client, m *hitl.SlackMessage) {
	in := m.Interaction
	if in == nil || in.Status != hitl.StatusPending || in.SlackOff() {
		s.move(ctx, m, hitl.SlackSkipped, time.Time{})
		return
	}
	channel := m.ChannelID
	if channel == "" {
		channel = cfg.ChannelID
	}
	msg := s.newMessage(in, cfg)
	if err := s.store.AddSlackActions(ctx, msg.actions); err != nil {
		s.retry(ctx, m, fmt.Errorf("store action tokens: %w", err))
		return
	}
	_, ts, err := api.PostMessageContext(ctx, channel, msg.options()...)
	if err != nil {
		s.retry(ctx, m, fmt.Errorf("post to channel %s: %w", channel, err))
		return
	}
	posted := *m
	posted.State, posted.DueAt, posted.Attempts, posted.ChannelID, posted.TS = hitl.SlackPosted, time.Time{}, 0, channel, ts
	ok, err := s.store.UpdateSlackMessage(ctx, &posted, hitl.SlackPosting, m.Attempts)
	switch {
	case err != nil:
		s.log.Error("record a posted Slack message; it may be posted again", "interaction_id", in.ID, "error", err)
		return
	case !ok:
		s.log.Warn("a Slack message was posted after its claim ran out; it may appear twice", "interaction_id", in.ID)
		return
	}
	s.log.Info("posted to Slack", "interaction_id", in.ID, "channel_id", channel)
	if _, err := s.b.AppendEvent(ctx, &hitl.Event{
		Type: hitl.EventNotified, InteractionID: in.ID, Channel: hitl.ChannelSlack,
		Detail: "posted to Slack channel " + channel,
	}); err != nil {
		s.log.Error("record the Slack notification", "interaction_id", in.ID, "error", err)
	}
	// The interaction may have ended while the message was on its way:
	// its ended event found the row still posting, so look again.
	if n, err := s.store.EndSlackMessages(ctx, in.ID, s.now()); err != nil {
		s.log.Error("check whether an interaction ended", "interaction_id", in.ID, "error", err)
	} else if n > 0 {
		s.poke()
	}
}

// update replaces a claimed row's message with the outcome of its ended
// interaction: no buttons left.
func (s *Service) update(ctx context.Context, api *slack.Client, m *hitl.SlackMessage) {
	in := m.Interaction
	if in == nil {
		s.move(ctx, m, hitl.SlackFailed, time.Time{})
		return
	}
	msg := s.endedMessage(ctx, in)
	_, _, _, err := api.UpdateMessageContext(ctx, m.ChannelID, m.TS, msg.options()...)
	if err != nil {
		s.retry(ctx, m, fmt.Errorf("update message %s in channel %s: %w", m.TS, m.ChannelID, err))
		return
	}
	s.move(ctx, m, hitl.SlackClosed, time.Time{})
	s.log.Info("updated the Slack message", "interaction_id", in.ID, "status", string(in.Status))
}

// retry puts a claimed row back to wait (scheduled or ending) after a
// backoff, or Slack's Retry-After, or gives it up.
func (s *Service) retry(ctx context.Context, m *hitl.SlackMessage, err error) {
	back := hitl.SlackScheduled
	if m.State == hitl.SlackUpdating {
		back = hitl.SlackEnding
	}
	if ctx.Err() != nil {
		return // shutting down: the lease runs out and the row is taken up again
	}
	var rl *slack.RateLimitedError
	var se slack.SlackErrorResponse
	switch {
	case errors.As(err, &rl):
		s.log.Warn("Slack is rate limiting; trying again later", "interaction_id", m.InteractionID, "retry_after", rl.RetryAfter)
		s.moveKeep(ctx, m, back, s.now().Add(max(rl.RetryAfter, time.Second)))
		return
	case errors.As(err, &se) && permanent[se.Err], m.Attempts >= maxAttempts:
		s.log.Error("gave up on a Slack message", "interaction_id", m.InteractionID, "state", m.State, "attempts", m.Attempts, "error", err)
		s.move(ctx, m, hitl.SlackFailed, time.Time{})
		return
	}
	wait := backoff[min(m.Attempts, len(backoff))-1]
	s.log.Warn("Slack call failed; trying again later", "interaction_id", m.InteractionID, "state", m.State, "attempts", m.Attempts, "retry_in", wait, "error", err)
	s.moveKeep(ctx, m, back, s.now().Add(wait))
}

// move sets a claimed row's state, resetting its attempts.
func (s *Service) move(ctx context.Context, m *hitl.SlackMessage, state hitl.SlackState, due time.Time) {
	next := *m
	next.State, next.DueAt, next.Attempts = state, due, 0
	s.write(ctx, m, &next)
}

// moveKeep sets a claimed row's state, keeping its attempts (a retry).
func (s *Service) moveKeep(ctx context.Context, m *hitl.SlackMessage, state hitl.SlackState, due time.Time) {
	next := *m
	next.State, next.DueAt = state, due
	s.write(ctx, m, &next)
}

func (s *Service) write(ctx context.Context, m, next *hitl.SlackMessage) {
	ok, err := s.store.UpdateSlackMessage(ctx, next, m.State, m.Attempts)
	if err != nil {
		s.log.Error("update a Slack message row", "interaction_id", m.InteractionID, "error", err)
	} else if !ok {
		s.log.Warn("a Slack message row moved on while this server held it", "interaction_id", m.InteractionID)
	}
}
