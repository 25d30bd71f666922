package slack

import (
	"context"
	"strings"

	"github.com/hitl-sh/hitl"
	"github.com/slack-go/slack"
)

// escalate is the broker's escalation handler: a step that tells Slack
// replies in the thread of the posted message, also sent to the channel,
// that the question still waits ("⏰ Reminder") or whom it now asks too
// ("⬆️ Escalated to …"). A message not posted yet is left to its post,
// which comes later and tells everyone.
func (s *Service) escalate(_ context.Context, ev *hitl.Event) {
	d, err := hitl.ParseEscalationDetail(ev)
	in := ev.Interaction
	if err != nil || in == nil || !d.Tells(hitl.ChannelSlack) || in.SlackOff() {
		return
	}
	s.goHandle(func(ctx context.Context) { s.remind(ctx, in.ID, d) })
}

// remind posts the reminder of step d in the thread of id's message.
func (s *Service) remind(ctx context.Context, id string, d hitl.EscalationDetail) {
	cfg, api := s.client()
	if api == nil || !cfg.usable() {
		return
	}
	m, err := s.store.SlackMessage(ctx, id)
	if err != nil || m.State != hitl.SlackPosted || m.Interaction == nil || m.Interaction.Status != hitl.StatusPending {
		return
	}
	text := reminderText(d)
	if _, _, err := api.PostMessageContext(ctx, m.ChannelID, slack.MsgOptionText(text, false),
		slack.MsgOptionTS(m.TS), slack.MsgOptionBroadcast()); err != nil {
		s.log.Warn("post a Slack reminder", "interaction_id", id, "error", err)
		return
	}
	s.log.Info("reminded on Slack", "interaction_id", id, "channel_id", m.ChannelID, "step", d.Step)
	if _, err := s.b.AppendEvent(ctx, &hitl.Event{
		Type: hitl.EventNotified, InteractionID: id, Channel: hitl.ChannelSlack,
		Detail: "reminder posted to Slack channel " + m.ChannelID,
	}); err != nil {
		s.log.Error("record the Slack reminder", "interaction_id", id, "error", err)
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
