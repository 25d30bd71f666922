package slack

import (
	"context"

	"github.com/hitl-sh/hitl"
)

// The channel reads through the engine like any other surface. Answers
// go as the Slack user who gave them (see callerFor); the channel's own
// reads — the question behind a button, why an answer was refused, the
// rule an answer made — are made as the channel itself, trusted
// in-process code that sees every interaction and rule: a Slack user is
// told what became of a question even when it is not theirs to answer.

// asChannel returns ctx carrying the channel's own identity: a caller
// with no role (trusted in-process code) on the Slack channel.
func asChannel(ctx context.Context) context.Context {
	return hitl.WithCaller(ctx, hitl.Caller{Channel: hitl.ChannelSlack})
}

// interaction returns interaction id as the store has it, for the
// channel's own use.
func (s *Service) interaction(ctx context.Context, id string) (*hitl.Interaction, error) {
	return s.b.Get(asChannel(ctx), id)
}
