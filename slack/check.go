package slack

import (
	"context"
	"errors"
	"fmt"

	"github.com/hitl-sh/hitl"
	"github.com/slack-go/slack"
)

// hints explain the Slack errors people meet while setting up.
var hints = map[string]string{
	"invalid_auth":      "Slack does not accept the bot token",
	"not_authed":        "no bot token was sent",
	"account_inactive":  "the bot token belongs to a deleted app or user",
	"token_revoked":     "the bot token was revoked",
	"channel_not_found": "no such channel, or the app cannot see it (for a private channel, invite the app first)",
	"not_in_channel":    "the app is not in the channel: in Slack, /invite @your-app there",
	"is_archived":       "the channel is archived",
	"missing_scope":     "the app lacks a scope (it needs chat:write, channels:history, users:read and users:read.email)",
}

// explainSlack turns a Slack API error into a sentence.
func explainSlack(err error) string {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		if h, ok := hints[se.Err]; ok {
			return fmt.Sprintf("%s (%s)", h, se.Err)
		}
		return se.Err
	}
	return err.Error()
}

// Test checks a configuration against Slack without saving it: auth.test
// with the bot token, apps.connections.open with the app token for Socket
// Mode, and a test message posted to the channel. u, when not nil, is laid
// over the stored configuration as SetConfig would (so settings can be
// tried before they are saved). Admins only.
func (s *Service) Test(ctx context.Context, u *ConfigUpdate) (TestResult, error) {
	if err := requireAdmin(ctx); err != nil {
		return TestResult{}, err
	}
	cfg, err := s.storedConfig(ctx)
	if err != nil && cfg == (Config{}) {
		return TestResult{}, fmt.Errorf("read slack config: %w", err)
	}
	if u != nil {
		if cfg, err = s.merge(cfg, *u); err != nil {
			return TestResult{}, err
		}
	}
	cfg = s.env.over(cfg)
	check := cfg
	check.Enabled = false
	switch err := check.validate(); {
	case err != nil:
		return TestResult{Message: hitl.ErrorMessage(err)}, nil
	case cfg.BotToken == "":
		return TestResult{Message: "Set a bot token (xoxb-…) first."}, nil
	case cfg.ChannelID == "":
		return TestResult{Message: "Set a channel ID (such as C0123ABCD) first."}, nil
	}
	api := s.newAPI(cfg)
	who, err := api.AuthTestContext(ctx)
	if err != nil {
		return TestResult{Message: "auth.test failed: " + explainSlack(err)}, nil
	}
	if cfg.Transport() == TransportSocketMode {
		if _, _, err := api.StartSocketModeContext(ctx); err != nil {
			return TestResult{Message: "The app token does not open Socket Mode: " + explainSlack(err) +
				" (it needs the connections:write scope, and Socket Mode turned on in the app's settings)"}, nil
		}
	}
	_, _, err = api.PostMessageContext(ctx, cfg.ChannelID,
		slack.MsgOptionText("✅ hitl can post here: this is a test of its Slack connection.", false))
	if err != nil {
		return TestResult{Message: fmt.Sprintf("Could not post to %s: %s", cfg.ChannelID, explainSlack(err))}, nil
	}
	s.log.Info("Slack connection test passed", "team", who.Team, "bot", who.User, "channel_id", cfg.ChannelID)
	return TestResult{
		Success: true,
		Message: fmt.Sprintf("Slack connection test successful! Connected to %s as %s and posted a test message to %s.", who.Team, who.User, cfg.ChannelID),
	}, nil
}
