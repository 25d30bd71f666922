package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/slack"
)

// slackConfig is what hitl serve's flags say about the Slack channel.
// Each flag defaults to its HITL_SLACK_* variable; what is set here wins
// over the configuration saved through the API, which shows it as coming
// from the environment.
type slackConfig struct {
	fs *flag.FlagSet

	enabled                                      *envBool
	botToken, appToken, signingSecret, channelID string
	delay, mention, unmapped                     string
	secretKeyFile, apiURL                        string
}

// slackFlags adds hitl serve's Slack flags to fs.
func slackFlags(fs *flag.FlagSet) *slackConfig {
	c := &slackConfig{fs: fs}
	c.enabled = envBoolVar(fs, "slack-enabled", "HITL_SLACK_ENABLED", "turn the Slack channel on, or off with --slack-enabled=false; unset: as\nsaved, or on when a bot token is given here")
	// Secrets are read from the environment after parsing, not given as
	// flag defaults, which --help would print.
	fs.StringVar(&c.botToken, "slack-bot-token", "", "Slack bot `token` (xoxb-…); prefer the variable, flags show in ps (HITL_SLACK_BOT_TOKEN)")
	fs.StringVar(&c.appToken, "slack-app-token", "", "Slack app-level `token` (xapp-…) for Socket Mode (HITL_SLACK_APP_TOKEN)")
	fs.StringVar(&c.signingSecret, "slack-signing-secret", "", "Slack signing `secret`: receive Slack's requests over HTTP at /slack/events\nand /slack/interactivity instead of Socket Mode (HITL_SLACK_SIGNING_SECRET)")
	fs.StringVar(&c.channelID, "slack-channel", os.Getenv("HITL_SLACK_CHANNEL_ID"), "Slack channel `ID` to post to, such as C0123ABCD (HITL_SLACK_CHANNEL_ID)")
	fs.StringVar(&c.delay, "slack-delay", os.Getenv("HITL_SLACK_DELAY_SECONDS"), "`seconds` a question waits unanswered before it is posted; 0 posts at once;\ndefault 120 (HITL_SLACK_DELAY_SECONDS)")
	fs.StringVar(&c.mention, "slack-mention", os.Getenv("HITL_SLACK_MENTION"), "start each message with a mention: none, here or channel (HITL_SLACK_MENTION)")
	fs.StringVar(&c.unmapped, "slack-unmapped-users", os.Getenv("HITL_SLACK_UNMAPPED_USERS"), "who may answer from a Slack account with no hitl user of the same email:\nuntargeted (questions for anyone; the default) or none (HITL_SLACK_UNMAPPED_USERS)")
	fs.StringVar(&c.apiURL, "slack-api-url", os.Getenv("HITL_SLACK_API_URL"), "Slack's Web API `URL`; default https://slack.com/api/ (GovSlack:\nhttps://slack-gov.com/api/) (HITL_SLACK_API_URL)")
	fs.StringVar(&c.secretKeyFile, "secret-key-file", os.Getenv("HITL_SECRET_KEY_FILE"), "`file` with the base64 key that encrypts secrets saved in the database,\ncreated if missing; default: the SQLite file's name plus .key. HITL_SECRET_KEY\n(the key itself) wins (HITL_SECRET_KEY_FILE)")
	return c
}

// settings returns the flags (and the secrets' variables) as the
// channel's fixed settings.
func (c *slackConfig) settings() (slack.Settings, error) {
	for _, f := range []struct {
		dst *string
		env string
	}{{&c.botToken, "HITL_SLACK_BOT_TOKEN"}, {&c.appToken, "HITL_SLACK_APP_TOKEN"}, {&c.signingSecret, "HITL_SLACK_SIGNING_SECRET"}} {
		if *f.dst == "" {
			*f.dst = os.Getenv(f.env)
		}
	}
	s := slack.Settings{
		BotToken: c.botToken, AppToken: c.appToken, SigningSecret: c.signingSecret,
		ChannelID: c.channelID, Mention: c.mention, UnmappedUsers: c.unmapped,
	}
	on, given := c.enabled.given()
	switch {
	case given:
		s.Enabled = &on
	case c.botToken != "":
		on := true
		s.Enabled = &on
	}
	if c.delay != "" {
		d, err := strconv.Atoi(c.delay)
		if err != nil {
			return s, fmt.Errorf("--slack-delay must be a whole number of seconds; got %q", c.delay)
		}
		s.DelaySeconds = &d
	}
	return s, nil
}

// check validates the flags.
func (c *slackConfig) check() error {
	s, err := c.settings()
	if err != nil {
		return err
	}
	if err := s.Validate(); err != nil {
		return fmt.Errorf("slack: %s", hitl.ErrorMessage(err))
	}
	if c.apiURL != "" {
		if u, err := url.Parse(c.apiURL); err != nil || u.Host == "" || u.Scheme != "https" && u.Scheme != "http" || !strings.HasSuffix(u.Path, "/") {
			return fmt.Errorf("--slack-api-url must be an http(s) URL ending in /; got %q", c.apiURL)
		}
	}
	return nil
}

// cipher returns what seals Slack's secrets saved in database db (see
// secretKey); nil without a key, which is logged with what it means
// (without; nothing when "").
func (c *slackConfig) cipher(log *slog.Logger, db, without string) (*slack.Cipher, error) {
	key, err := c.secretKey(log, db, without)
	if key == nil || err != nil {
		return nil, err
	}
	return slack.NewCipher(key)
}

// secretKey returns the key that seals the secrets saved in database db:
// the key in HITL_SECRET_KEY, or in the key file (--secret-key-file, or
// beside a SQLite file), made on first use. A PostgreSQL database shared
// by replicas needs the same key on each, so it is never made up: without
// one it returns nil, and logs what that means (without), unless without
// is "" (the caller says it itself).
func (c *slackConfig) secretKey(log *slog.Logger, db, without string) ([]byte, error) {
	var key []byte
	var err error
	switch {
	case os.Getenv("HITL_SECRET_KEY") != "":
		key, err = slack.ParseKey(os.Getenv("HITL_SECRET_KEY"))
		if err != nil {
			return nil, fmt.Errorf("HITL_SECRET_KEY: %w", err)
		}
	case c.secretKeyFile != "":
		key, err = slack.LoadKeyFile(c.secretKeyFile, true)
	case isPostgres(db):
		if without != "" {
			log.Warn("no secret key (HITL_SECRET_KEY or --secret-key-file): " + without)
		}
		return nil, nil
	case db == ":memory:":
		key = make([]byte, slack.KeySize)
		_, err = rand.Read(key)
	default:
		key, err = slack.LoadKeyFile(db+".key", true)
	}
	return key, err
}

// publicURL is the web inbox's URL for links in Slack: --public-url when
// hitl serve has it, else HITL_PUBLIC_URL.
func (c *slackConfig) publicURL() string {
	if f := c.fs.Lookup("public-url"); f != nil {
		return f.Value.String()
	}
	return os.Getenv("HITL_PUBLIC_URL")
}

// start starts the Slack channel over b, keeping its rows in store, the
// store b runs over (it does nothing until it is configured, here or
// through the API).
func (c *slackConfig) start(ctx context.Context, log *slog.Logger, b *broker.Broker, store hitl.Store, db string) (*slack.Service, error) {
	slackStore, ok := store.(hitl.SlackStore)
	if !ok {
		return nil, errors.New("the store cannot keep Slack messages")
	}
	ids, _ := store.(hitl.Identities)
	settings, err := c.settings()
	if err != nil {
		return nil, err
	}
	cipher, err := c.cipher(log, db, "Slack tokens cannot be saved through the API, only given as HITL_SLACK_* variables")
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	svc, err := slack.New(b, slackStore, &slack.Options{Identities: ids, Logger: log, Settings: settings, Cipher: cipher, PublicURL: c.publicURL(), APIURL: c.apiURL})
	if err != nil {
		return nil, err
	}
	if err := svc.Start(ctx); err != nil {
		return nil, err
	}
	return svc, nil
}
