package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/secret"
	"github.com/hitl-sh/hitl/webpush"
)

// pushConfig is what hitl serve's flags say about the Web Push channel.
type pushConfig struct {
	subject string
}

// pushFlags adds hitl serve's Web Push flags to fs.
func pushFlags(fs *flag.FlagSet) *pushConfig {
	c := &pushConfig{}
	fs.StringVar(&c.subject, "vapid-subject", envOr("HITL_VAPID_SUBJECT", webpush.DefaultSubject), "the contact push services see in Web Push's VAPID signature: a mailto:\n`address` or an https URL (HITL_VAPID_SUBJECT)")
	return c
}

// check validates the flags.
func (c *pushConfig) check() error {
	if err := webpush.CheckSubject(c.subject); err != nil {
		return fmt.Errorf("--vapid-subject: %s", hitl.ErrorMessage(err))
	}
	return nil
}

// start starts the Web Push channel over b. Its VAPID keys are sealed with
// the same secret key as Slack's and email's; push endpoints are checked
// like webhooks' URLs (wh's --webhook-allow-private applies to both).
func (c *pushConfig) start(ctx context.Context, log *slog.Logger, b *broker.Broker, store hitl.Store, sl *slackConfig, wh *webhookConfig, db string) (*webpush.Service, error) {
	ps, ok := store.(webpush.Store)
	if !ok {
		return nil, fmt.Errorf("the store cannot keep push subscriptions")
	}
	key, err := sl.secretKey(log, db, "the Web Push keys are kept in memory, and browsers' subscriptions stop working when hitl restarts")
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	var cipher *secret.Cipher
	if key != nil {
		if cipher, err = secret.NewCipher(key, hitl.ChannelPush); err != nil {
			return nil, err
		}
	}
	ids, _ := store.(hitl.Identities)
	svc := webpush.New(b, ps, &webpush.Options{
		Logger: log, Subject: c.subject, Cipher: cipher, Identities: ids, AllowPrivate: wh.allowPrivate.on(),
	})
	if err := svc.Start(ctx); err != nil {
		return nil, err
	}
	return svc, nil
}
