package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/email"
	"github.com/hitl-sh/hitl/secret"
)

// emailConfig is what hitl serve's flags say about the email channel.
// Each flag defaults to its environment variable; what is set here wins
// over the configuration saved through the API.
type emailConfig struct {
	enabled                        *envBool
	smtpURL, from, delay, defaults string
}

// emailFlags adds hitl serve's email flags to fs.
func emailFlags(fs *flag.FlagSet) *emailConfig {
	c := &emailConfig{}
	c.enabled = envBoolVar(fs, "email-enabled", "HITL_EMAIL_ENABLED", "turn email on, or off with --email-enabled=false; unset: as saved, or on\nwhen an SMTP URL is given here")
	// The SMTP URL holds a password: it is read from the environment after
	// parsing, not given as a flag default, which --help would print.
	fs.StringVar(&c.smtpURL, "smtp-url", "", "SMTP server `URL`: smtp://user:password@host:587 (STARTTLS when offered;\ncredentials only over TLS) or smtps://…:465; prefer the variable, flags show\nin ps (HITL_SMTP_URL)")
	fs.StringVar(&c.from, "smtp-from", os.Getenv("HITL_SMTP_FROM"), "the mail's From `address`, such as \"hitl <hitl@example.com>\" (HITL_SMTP_FROM)")
	fs.StringVar(&c.delay, "email-delay", os.Getenv("HITL_EMAIL_DELAY_SECONDS"), "`seconds` a question waits unanswered before it is mailed; 0 mails at once;\ndefault 120 (HITL_EMAIL_DELAY_SECONDS)")
	fs.StringVar(&c.defaults, "email-default-recipients", os.Getenv("HITL_EMAIL_DEFAULT_RECIPIENTS"), "comma-separated `addresses` mailed questions that target no one in\nparticular (HITL_EMAIL_DEFAULT_RECIPIENTS)")
	return c
}

// settings returns the flags (and the SMTP URL's variable) as the
// channel's fixed settings.
func (c *emailConfig) settings() (email.Settings, error) {
	if c.smtpURL == "" {
		c.smtpURL = os.Getenv("HITL_SMTP_URL")
	}
	s := email.Settings{SMTPURL: c.smtpURL, From: c.from}
	if on, ok := c.enabled.given(); ok {
		s.Enabled = &on
	}
	if c.delay != "" {
		d, err := strconv.Atoi(c.delay)
		if err != nil {
			return s, fmt.Errorf("--email-delay must be a whole number of seconds; got %q", c.delay)
		}
		s.DelaySeconds = &d
	}
	if c.defaults != "" {
		for _, a := range strings.Split(c.defaults, ",") {
			if a = strings.TrimSpace(a); a != "" {
				s.DefaultRecipients = append(s.DefaultRecipients, a)
			}
		}
	}
	return s, nil
}

// check validates the flags.
func (c *emailConfig) check() error {
	s, err := c.settings()
	if err != nil {
		return err
	}
	if err := s.Validate(); err != nil {
		return fmt.Errorf("email: %s", hitl.ErrorMessage(err))
	}
	return nil
}

// start starts the email channel over b (which mails nothing until it is
// configured, here or through the API). Links in mail lead to publicURL,
// else to the address hitl listens on.
func (c *emailConfig) start(ctx context.Context, log *slog.Logger, b *broker.Broker, store hitl.Store, sl *slackConfig, db string, addr net.Addr) (*email.Service, error) {
	ns, ok := store.(hitl.NotificationStore)
	if !ok {
		return nil, fmt.Errorf("the store cannot keep notifications")
	}
	settings, err := c.settings()
	if err != nil {
		return nil, err
	}
	key, err := sl.secretKey(log, db, "the SMTP URL cannot be saved through the API, only given as HITL_SMTP_URL")
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	var cipher *secret.Cipher
	if key != nil {
		if cipher, err = secret.NewCipher(key, "email"); err != nil {
			return nil, err
		}
	}
	public := sl.publicURL()
	if public == "" {
		public = listenURL(addr)
		if settings.SMTPURL != "" {
			log.Warn("no --public-url: links in mail lead to " + public + ", which people may not reach")
		}
	}
	ids, _ := store.(hitl.Identities)
	svc := email.New(b, ns, &email.Options{Logger: log, Settings: settings, Cipher: cipher, PublicURL: public, Identities: ids})
	if err := svc.Start(ctx); err != nil {
		return nil, err
	}
	return svc, nil
}
