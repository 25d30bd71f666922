package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/email"
	"github.com/hitl-sh/hitl/slack"
	"github.com/hitl-sh/hitl/webhook"
	"github.com/hitl-sh/hitl/webpush"
)

// channelFlags are what hitl serve's flags say about the channels that
// reach people and agents beside the inbox.
type channelFlags struct {
	slack   *slackConfig
	webhook *webhookConfig
	email   *emailConfig
	push    *pushConfig
}

// check checks each channel's flags.
func (f channelFlags) check() error {
	for _, check := range []func() error{f.slack.check, f.webhook.check, f.email.check, f.push.check} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// channels are the running channels of a server.
type channels struct {
	slack *slack.Service
	hooks *webhook.Service
	email *email.Service
	push  *webpush.Service
}

// startChannels starts every channel over b and store, in the order they
// depend on each other; when one cannot start, those started are closed.
func startChannels(ctx context.Context, log *slog.Logger, b *broker.Broker, store hitl.Store, f channelFlags, db string, addr net.Addr) (*channels, error) {
	c := &channels{}
	var err error
	if c.slack, err = f.slack.start(ctx, log, b, store, db); err != nil {
		return nil, fmt.Errorf("cannot start the Slack channel: %w", err)
	}
	if c.hooks, err = f.webhook.start(ctx, log, store, b, f.slack, db); err != nil {
		c.close()
		return nil, fmt.Errorf("cannot start webhooks: %w", err)
	}
	if c.email, err = f.email.start(ctx, log, b, store, f.slack, db, addr); err != nil {
		c.close()
		return nil, fmt.Errorf("cannot start the email channel: %w", err)
	}
	if c.push, err = f.push.start(ctx, log, b, store, f.slack, f.webhook, db); err != nil {
		c.close()
		return nil, fmt.Errorf("cannot start Web Push: %w", err)
	}
	return c, nil
}

// close stops the channels that run. Slack's in-flight calls may still
// record events, so the store must outlive this.
func (c *channels) close() {
	if c.slack != nil {
		c.slack.Close()
	}
	if c.hooks != nil {
		c.hooks.Close()
	}
	if c.email != nil {
		c.email.Close()
	}
	if c.push != nil {
		c.push.Close()
	}
}
