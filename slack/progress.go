package slack

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/slack-go/slack"
)

// progressEvent reports whether ev changed a pending interaction's
// message without ending it: a vote, a claim, a release.
func progressEvent(ev *hitl.Event) bool {
	switch ev.Type {
	case hitl.EventVoted, hitl.EventClaimed, hitl.EventReleased:
		return true
	}
	return false
}

// progress updates the posted message of interaction id with its votes
// and claim as they now are. Nothing is posted for a message not posted
// yet (it will show them when it is). Every replica does it for every
// vote; the update is the same, read from the store. When the interaction
// ended while this update was on its way and the outcome was already
// shown, the outcome is shown again, so a late update never brings back
// the buttons.
func (s *Service) progress(ctx context.Context, id string) {
	cfg, api := s.client()
	if api == nil || !cfg.usable() {
		return
	}
	m, err := s.store.SlackMessage(ctx, id)
	if err != nil || m.State != hitl.SlackPosted || m.Interaction == nil || m.Interaction.Status != hitl.StatusPending {
		return
	}
	msg := s.newMessage(m.Interaction, cfg)
	if err := s.store.AddSlackActions(ctx, msg.actions); err != nil {
		s.log.Error("store action tokens for a Slack update", "interaction_id", id, "error", err)
		return
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, m.ChannelID, m.TS, msg.options()...); err != nil {
		s.log.Warn("update a Slack message with its votes", "interaction_id", id, "error", err)
		return
	}
	again, err := s.store.SlackMessage(ctx, id)
	if err != nil || again.State != hitl.SlackClosed || again.Interaction == nil {
		return
	}
	ended := s.endedMessage(ctx, again.Interaction)
	if _, _, _, err := api.UpdateMessageContext(ctx, again.ChannelID, again.TS, ended.options()...); err != nil {
		s.log.Error("show an outcome again after a late Slack update", "interaction_id", id, "error", err)
	}
}

// workflowBlock returns the context block that shows the votes so far
// and who is on it ("🗳️ 1 of 2 approvals — alice approved", "🙋 alice is
// on it until …"), or nil when there is neither. Free-text and form
// answers are not repeated (they may be secrets).
func workflowBlock(in *hitl.Interaction, now time.Time) slack.Block {
	var lines []string
	if in.Consensus.Voting() {
		lines = append(lines, "🗳️ "+tally(in))
	}
	if c := in.ClaimedAt(now); c != nil && in.Status == hitl.StatusPending {
		line := fmt.Sprintf("🙋 %s is on it until %s", who(c.By), slackDate(c.ExpiresAt))
		if in.ClaimMode == hitl.ClaimExclusive {
			line += " (only they may answer meanwhile)"
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return nil
	}
	return contextBlock(strings.Join(lines, "\n"))
}

// tally says where the votes stand, in mrkdwn: "1 of 2 approvals — alice
// approved".
func tally(in *hitl.Interaction) string {
	var head string
	if in.Type == hitl.TypeApproval {
		yes := 0
		for _, v := range in.Votes {
			if string(v.Value) == "true" {
				yes++
			}
		}
		head = fmt.Sprintf("%d of %d approvals", yes, in.VotesNeeded)
	} else {
		head = fmt.Sprintf("%d answered, %d alike needed", len(in.Votes), in.VotesNeeded)
	}
	if in.Consensus.Veto {
		head += " (any reject vetoes)"
	}
	var who_ []string
	for _, v := range in.Votes {
		who_ = append(who_, who(v.By)+" "+escape(v.Describe(in)))
	}
	if len(who_) == 0 {
		return head
	}
	return head + " — " + strings.Join(who_, ", ")
}
