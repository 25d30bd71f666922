package slack

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hitl-sh/hitl"
)

// DefaultDelaySeconds is how long an interaction waits unanswered before
// it is posted to Slack, unless the configuration or the agent says
// otherwise.
const DefaultDelaySeconds = 120

// Mentions that can start a posted message.
const (
	MentionNone    = "none"
	MentionHere    = "here"
	MentionChannel = "channel"
)

// Who may answer from a Slack account that maps to no hitl user.
const (
	UnmappedUntargeted = "untargeted" // interactions that target no one in particular
	UnmappedNone       = "none"       // no one: every answer needs a hitl user with the same email
)

// Transports over which Slack reaches hitl.
const (
	TransportNone       = "none"
	TransportSocketMode = "socket_mode"
	TransportHTTP       = "http"
)

// Settings are Slack settings fixed by flags or environment variables
// (HITL_SLACK_*). A field that is set wins over the stored configuration,
// and the API says it comes from the environment. Strings are unset when
// empty.
type Settings struct {
	Enabled       *bool
	BotToken      string
	AppToken      string
	SigningSecret string
	ChannelID     string
	DelaySeconds  *int
	Mention       string
	UnmappedUsers string
}

// Config is the Slack configuration in effect: the stored one with the
// environment's settings over it. It holds secrets in clear; it is never
// logged or returned by the API (see ConfigView).
type Config struct {
	Enabled       bool
	BotToken      string
	AppToken      string
	SigningSecret string
	ChannelID     string
	DelaySeconds  int
	Mention       string
	UnmappedUsers string
}

// Transport returns how Slack reaches hitl: over HTTP when a signing
// secret is set (Slack's Events API and interactivity URLs), else Socket
// Mode when an app-level token is set, else not at all (messages are
// posted, but their buttons and thread replies go unheard).
func (c Config) Transport() string {
	switch {
	case c.SigningSecret != "":
		return TransportHTTP
	case c.AppToken != "":
		return TransportSocketMode
	}
	return TransportNone
}

// usable reports whether messages can be posted.
func (c Config) usable() bool {
	return c.Enabled && c.BotToken != "" && c.ChannelID != ""
}

// ConfigView is the configuration as GET /api/human-feedback/slack/config
// shows it, secrets masked (see hitl.SlackConfigView).
type ConfigView = hitl.SlackConfigView

// ConfigUpdate is the body of POST /api/human-feedback/slack/config (see
// hitl.SlackConfigUpdate).
type ConfigUpdate = hitl.SlackConfigUpdate

// TestResult is the answer of POST /api/human-feedback/slack/test.
type TestResult = hitl.SlackTestResult

// envNames are the environment variables of each field, for messages.
var envNames = map[string]string{
	"enabled":        "HITL_SLACK_ENABLED",
	"bot_token":      "HITL_SLACK_BOT_TOKEN",
	"app_token":      "HITL_SLACK_APP_TOKEN",
	"signing_secret": "HITL_SLACK_SIGNING_SECRET",
	"channel_id":     "HITL_SLACK_CHANNEL_ID",
	"delay_seconds":  "HITL_SLACK_DELAY_SECONDS",
	"mention":        "HITL_SLACK_MENTION",
	"unmapped_users": "HITL_SLACK_UNMAPPED_USERS",
}

// fromEnv lists the fields e sets, in a fixed order.
func (e Settings) fromEnv() []string {
	out := []string{}
	add := func(name string, set bool) {
		if set {
			out = append(out, name)
		}
	}
	add("enabled", e.Enabled != nil)
	add("bot_token", e.BotToken != "")
	add("app_token", e.AppToken != "")
	add("channel_id", e.ChannelID != "")
	add("signing_secret", e.SigningSecret != "")
	add("delay_seconds", e.DelaySeconds != nil)
	add("mention", e.Mention != "")
	add("unmapped_users", e.UnmappedUsers != "")
	return out
}

// over returns c with e's settings over it.
func (e Settings) over(c Config) Config {
	if e.Enabled != nil {
		c.Enabled = *e.Enabled
	}
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&c.BotToken, e.BotToken)
	set(&c.AppToken, e.AppToken)
	set(&c.SigningSecret, e.SigningSecret)
	set(&c.ChannelID, e.ChannelID)
	set(&c.Mention, e.Mention)
	set(&c.UnmappedUsers, e.UnmappedUsers)
	if e.DelaySeconds != nil {
		c.DelaySeconds = *e.DelaySeconds
	}
	return c
}

// Validate checks the settings themselves (not whether Slack accepts
// them), so that bad flags stop hitl serve at start-up.
func (e Settings) Validate() error {
	c := e.over(defaultConfig())
	return c.validate()
}

func defaultConfig() Config {
	return Config{DelaySeconds: DefaultDelaySeconds, Mention: MentionNone, UnmappedUsers: UnmappedUntargeted}
}

// validate checks c's values: token kinds, the channel ID, ranges.
func (c Config) validate() error {
	switch {
	case c.BotToken != "" && !strings.HasPrefix(c.BotToken, "xoxb-"):
		return hitl.Errorf(hitl.EINVALID, "bot_token must be a bot token (xoxb-…)")
	case c.AppToken != "" && !strings.HasPrefix(c.AppToken, "xapp-"):
		return hitl.Errorf(hitl.EINVALID, "app_token must be an app-level token (xapp-…) with the connections:write scope")
	case c.ChannelID != "" && !hitl.ValidSlackChannelID(c.ChannelID):
		return hitl.Errorf(hitl.EINVALID, "channel_id must be a Slack channel ID such as C0123ABCD (in Slack: channel details, at the bottom)")
	case c.DelaySeconds < 0 || c.DelaySeconds > int(hitl.MaxNotifyDelay.Seconds()):
		return hitl.Errorf(hitl.EINVALID, "delay_seconds must be from 0 to %d", int(hitl.MaxNotifyDelay.Seconds()))
	case c.Mention != MentionNone && c.Mention != MentionHere && c.Mention != MentionChannel:
		return hitl.Errorf(hitl.EINVALID, "mention must be none, here or channel; got %q", c.Mention)
	case c.UnmappedUsers != UnmappedUntargeted && c.UnmappedUsers != UnmappedNone:
		return hitl.Errorf(hitl.EINVALID, "unmapped_users must be untargeted or none; got %q", c.UnmappedUsers)
	case c.Enabled && (c.BotToken == "" || c.ChannelID == ""):
		return hitl.Errorf(hitl.EINVALID, "Slack needs a bot_token and a channel_id to be enabled")
	}
	return nil
}

// Mask shows enough of a secret to recognise it: its kind prefix (xoxb-,
// xapp-) and its last four characters, as "xoxb-...1234". Short secrets
// show no characters at all.
func Mask(secret string) string {
	if secret == "" {
		return ""
	}
	prefix := ""
	if i := strings.IndexByte(secret, '-'); i > 0 && i <= 5 && strings.HasPrefix(secret, "x") {
		prefix = secret[:i+1]
	}
	if len(secret)-len(prefix) < 12 {
		return prefix + "..."
	}
	return prefix + "..." + secret[len(secret)-4:]
}

// view returns c as the API shows it.
func (s *Service) view(c Config) ConfigView {
	return ConfigView{
		Enabled:         c.Enabled,
		BotToken:        Mask(c.BotToken),
		AppToken:        Mask(c.AppToken),
		ChannelID:       c.ChannelID,
		SigningSecret:   Mask(c.SigningSecret),
		DelaySeconds:    c.DelaySeconds,
		Mention:         c.Mention,
		UnmappedUsers:   c.UnmappedUsers,
		Transport:       c.Transport(),
		Connected:       s.socketConnected(),
		FromEnvironment: s.env.fromEnv(),
	}
}

// requireAdmin refuses callers other than admins (and trusted in-process
// code, which has no role): the configuration holds the bot's tokens.
func requireAdmin(ctx context.Context) error {
	c := hitl.CallerFrom(ctx)
	if c.Role != hitl.RoleAdmin && c.Role != "" {
		return hitl.Errorf(hitl.EFORBIDDEN, "only admins may see or change the Slack configuration")
	}
	return nil
}

// storedConfig reads the stored configuration with its secrets opened;
// the defaults when none was saved.
func (s *Service) storedConfig(ctx context.Context) (Config, error) {
	st, err := s.store.SlackConfig(ctx)
	if errors.Is(err, hitl.ErrNotFound) {
		return defaultConfig(), nil
	} else if err != nil {
		return Config{}, err
	}
	c := Config{
		Enabled: st.Enabled, ChannelID: st.ChannelID, DelaySeconds: st.DelaySeconds,
		Mention: st.Mention, UnmappedUsers: st.UnmappedUsers,
	}
	var errs []error
	open := func(dst *string, field, sealed string) {
		if sealed == "" {
			return
		}
		if s.cipher == nil {
			errs = append(errs, fmt.Errorf("stored %s cannot be read without the secret key (HITL_SECRET_KEY or --secret-key-file)", field))
			return
		}
		v, err := s.cipher.Open(field, sealed)
		if err != nil {
			errs = append(errs, err)
			return
		}
		*dst = v
	}
	open(&c.BotToken, "bot_token", st.BotToken)
	open(&c.AppToken, "app_token", st.AppToken)
	open(&c.SigningSecret, "signing_secret", st.SigningSecret)
	return c, errors.Join(errs...)
}

// effective reads the stored configuration and puts the environment's
// settings over it. Secrets that cannot be opened are left out (and
// logged), so that the environment's, or new ones, can still be used.
func (s *Service) effective(ctx context.Context) (Config, error) {
	c, err := s.storedConfig(ctx)
	if err != nil {
		if c == (Config{}) {
			return Config{}, fmt.Errorf("read slack config: %w", err)
		}
		s.log.Error("stored Slack secrets are unusable", "error", err)
	}
	return s.env.over(c), nil
}

// Config returns the configuration in effect, masked. Admins only.
func (s *Service) Config(ctx context.Context) (ConfigView, error) {
	if err := requireAdmin(ctx); err != nil {
		return ConfigView{}, err
	}
	c, err := s.effective(ctx)
	if err != nil {
		return ConfigView{}, err
	}
	return s.view(c), nil
}

// SetConfig applies u to the stored configuration, seals its secrets,
// saves it and reconfigures the channel at once (this server; other
// replicas within a minute). A field the environment sets may only be
// sent back unchanged (or masked). Admins only.
func (s *Service) SetConfig(ctx context.Context, u ConfigUpdate) (ConfigView, error) {
	if err := requireAdmin(ctx); err != nil {
		return ConfigView{}, err
	}
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	stored, err := s.storedConfig(ctx)
	if err != nil && stored == (Config{}) {
		return ConfigView{}, fmt.Errorf("read slack config: %w", err)
	}
	next, err := s.merge(stored, u)
	if err != nil {
		return ConfigView{}, err
	}
	// The stored values must be well formed even where the environment
	// hides them; whether Slack can be enabled depends on both.
	formats := next
	formats.Enabled = false
	if err := formats.validate(); err != nil {
		return ConfigView{}, err
	}
	eff := s.env.over(next)
	if err := eff.validate(); err != nil {
		return ConfigView{}, err
	}
	sealed := &hitl.SlackConfig{
		Enabled: next.Enabled, ChannelID: next.ChannelID, DelaySeconds: next.DelaySeconds,
		Mention: next.Mention, UnmappedUsers: next.UnmappedUsers, UpdatedAt: s.now(),
	}
	for _, f := range []struct {
		dst         *string
		name, value string
	}{
		{&sealed.BotToken, "bot_token", next.BotToken},
		{&sealed.AppToken, "app_token", next.AppToken},
		{&sealed.SigningSecret, "signing_secret", next.SigningSecret},
	} {
		if f.value == "" {
			continue
		}
		if s.cipher == nil {
			return ConfigView{}, hitl.Errorf(hitl.EINVALID,
				"%s cannot be saved: secrets are stored encrypted and this server has no secret key; set HITL_SECRET_KEY (openssl rand -base64 32) or --secret-key-file, or pass it as %s", f.name, envNames[f.name])
		}
		if *f.dst, err = s.cipher.Seal(f.name, f.value); err != nil {
			return ConfigView{}, fmt.Errorf("seal %s: %w", f.name, err)
		}
	}
	if err := s.store.SaveSlackConfig(ctx, sealed); err != nil {
		return ConfigView{}, err
	}
	s.log.Info("Slack configuration saved", "enabled", eff.Enabled, "channel_id", eff.ChannelID,
		"transport", eff.Transport(), "delay_seconds", eff.DelaySeconds, "by", hitl.CallerFrom(ctx).Name)
	s.applyLocked(eff)
	return s.view(eff), nil
}

// merge applies u to stored. Secrets sent back masked keep the stored
// value; fields the environment sets may only be sent unchanged.
func (s *Service) merge(stored Config, u ConfigUpdate) (Config, error) {
	next := stored
	env := s.env
	str := func(name string, dst *string, v *string, envValue string, secret bool) error {
		if v == nil {
			return nil
		}
		val := strings.TrimSpace(*v)
		if envValue != "" {
			if val == envValue || secret && val == Mask(envValue) {
				return nil
			}
			return hitl.Errorf(hitl.ECONFLICT, "%s is set by the environment (%s); change it there", name, envNames[name])
		}
		if secret && val != "" && val == Mask(*dst) {
			return nil // sent back as GET showed it
		}
		*dst = val
		return nil
	}
	if err := str("bot_token", &next.BotToken, u.BotToken, env.BotToken, true); err != nil {
		return Config{}, err
	}
	if err := str("app_token", &next.AppToken, u.AppToken, env.AppToken, true); err != nil {
		return Config{}, err
	}
	if err := str("signing_secret", &next.SigningSecret, u.SigningSecret, env.SigningSecret, true); err != nil {
		return Config{}, err
	}
	if err := str("channel_id", &next.ChannelID, u.ChannelID, env.ChannelID, false); err != nil {
		return Config{}, err
	}
	if err := str("mention", &next.Mention, u.Mention, env.Mention, false); err != nil {
		return Config{}, err
	}
	if err := str("unmapped_users", &next.UnmappedUsers, u.UnmappedUsers, env.UnmappedUsers, false); err != nil {
		return Config{}, err
	}
	if next.Mention == "" {
		next.Mention = MentionNone
	}
	if next.UnmappedUsers == "" {
		next.UnmappedUsers = UnmappedUntargeted
	}
	if u.Enabled != nil {
		if env.Enabled != nil && *env.Enabled != *u.Enabled {
			return Config{}, hitl.Errorf(hitl.ECONFLICT, "enabled is set by the environment (%s); change it there", envNames["enabled"])
		}
		next.Enabled = *u.Enabled
	}
	if u.DelaySeconds != nil {
		if env.DelaySeconds != nil && *env.DelaySeconds != *u.DelaySeconds {
			return Config{}, hitl.Errorf(hitl.ECONFLICT, "delay_seconds is set by the environment (%s); change it there", envNames["delay_seconds"])
		}
		next.DelaySeconds = *u.DelaySeconds
	}
	return next, nil
}
