package ui_test

import (
	"testing"

	"github.com/hitl-sh/hitl/internal/slackfake"
)

// The Slack the tests' servers talk to is internal/slackfake: it accepts
// one bot token and one app token, and has one channel.
const (
	fakeBotToken = slackfake.BotToken // masked: xoxb-...ijkl
	fakeAppToken = slackfake.AppToken // masked: xapp-...uvwx
	fakeChannel  = slackfake.Channel
)

// fakeSlack is the fake Slack of a test server.
type fakeSlack = slackfake.Server

// newFakeSlack starts a fake Slack whose only channel is fakeChannel, so
// that a post to any other fails as it would on Slack.
func newFakeSlack(t *testing.T) *fakeSlack {
	t.Helper()
	return slackfake.New(t, &slackfake.Options{Channels: []string{fakeChannel}})
}
