package email

import (
	"fmt"
	"net/mail"
	"net/url"
	"strconv"
	"strings"

	"github.com/hitl-sh/hitl"
)

// DefaultDelaySeconds is how long a question waits unanswered before it is
// mailed, unless configured otherwise.
const DefaultDelaySeconds = 120

// maxDefaultRecipients bounds the default list of addresses.
const maxDefaultRecipients = 100

// redactedPassword stands for the stored password in a URL the API shows;
// sent back, it keeps the stored one.
const redactedPassword = "xxxxx"

// Settings are the email settings fixed by flags or environment variables
// (HITL_SMTP_URL, HITL_SMTP_FROM, HITL_EMAIL_*). A field that is set wins
// over the stored configuration, and the API says it comes from the
// environment. Strings are unset when empty.
type Settings struct {
	Enabled           *bool
	SMTPURL           string
	From              string
	DelaySeconds      *int
	DefaultRecipients []string
}

// Config is the email configuration in effect: the stored one with the
// environment's settings over it. SMTPURL holds the password in clear; a
// Config is never logged or returned by the API (see ConfigView).
type Config struct {
	Enabled           bool
	SMTPURL           string
	From              string
	DelaySeconds      int
	DefaultRecipients []string
}

// usable reports whether mail can be sent.
func (c Config) usable() bool {
	return c.Enabled && c.SMTPURL != "" && c.From != ""
}

// stored is the configuration as the store keeps it (JSON in the channel's
// settings), with the SMTP URL and the link key sealed.
type stored struct {
	Enabled           bool     `json:"enabled"`
	SMTPURL           string   `json:"smtp_url"` // sealed
	From              string   `json:"from"`
	DelaySeconds      int      `json:"delay_seconds"`
	DefaultRecipients []string `json:"default_recipients"`
	LinkKey           string   `json:"link_key"` // sealed, base64
}

// ConfigView is the configuration as the API shows it (see
// hitl.EmailConfigView).
type ConfigView = hitl.EmailConfigView

// ConfigUpdate is a change to the configuration (see
// hitl.EmailConfigUpdate).
type ConfigUpdate = hitl.EmailConfigUpdate

// TestResult is the answer of a test mail (see hitl.EmailTestResult).
type TestResult = hitl.EmailTestResult

// envNames are the environment variables of each field, for messages.
var envNames = map[string]string{
	"enabled":            "HITL_EMAIL_ENABLED",
	"smtp_url":           "HITL_SMTP_URL",
	"from":               "HITL_SMTP_FROM",
	"delay_seconds":      "HITL_EMAIL_DELAY_SECONDS",
	"default_recipients": "HITL_EMAIL_DEFAULT_RECIPIENTS",
}

// fromEnv lists the fields e sets, in a fixed order.
func (e Settings) fromEnv() []string {
	out := []string{}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"enabled", e.Enabled != nil}, {"smtp_url", e.SMTPURL != ""}, {"from", e.From != ""},
		{"delay_seconds", e.DelaySeconds != nil}, {"default_recipients", e.DefaultRecipients != nil},
	} {
		if f.set {
			out = append(out, f.name)
		}
	}
	return out
}

// Validate checks the settings given by flags or the environment.
func (e Settings) Validate() error {
	c := Config{SMTPURL: e.SMTPURL, From: e.From, DefaultRecipients: e.DefaultRecipients}
	if e.DelaySeconds != nil {
		c.DelaySeconds = *e.DelaySeconds
	}
	return c.validate()
}

// over returns c with the environment's settings laid over it.
func (e Settings) over(c Config) Config {
	if e.SMTPURL != "" {
		c.SMTPURL = e.SMTPURL
		c.Enabled = true
	}
	if e.Enabled != nil {
		c.Enabled = *e.Enabled
	}
	if e.From != "" {
		c.From = e.From
	}
	if e.DelaySeconds != nil {
		c.DelaySeconds = *e.DelaySeconds
	}
	if e.DefaultRecipients != nil {
		c.DefaultRecipients = e.DefaultRecipients
	}
	return c
}

// validate checks every field that is set.
func (c Config) validate() error {
	if c.SMTPURL != "" {
		if _, err := parseSMTPURL(c.SMTPURL); err != nil {
			return err
		}
	}
	if c.From != "" {
		if _, err := mail.ParseAddress(c.From); err != nil {
			return hitl.Errorf(hitl.EINVALID, "from must be an email address such as hitl@example.com or \"hitl <hitl@example.com>\"; got %q", c.From)
		}
	}
	if c.DelaySeconds < 0 || c.DelaySeconds > int(hitl.MaxNotifyDelay.Seconds()) {
		return hitl.Errorf(hitl.EINVALID, "delay_seconds must be from 0 to %d", int(hitl.MaxNotifyDelay.Seconds()))
	}
	if len(c.DefaultRecipients) > maxDefaultRecipients {
		return hitl.Errorf(hitl.EINVALID, "default_recipients may hold up to %d addresses", maxDefaultRecipients)
	}
	for _, a := range c.DefaultRecipients {
		if addr, err := mail.ParseAddress(a); err != nil || addr.Address != a {
			return hitl.Errorf(hitl.EINVALID, "default_recipients must be plain addresses such as alice@example.com; got %q", a)
		}
	}
	return nil
}

// smtpTarget is where and how mail is sent, parsed from an SMTP URL.
type smtpTarget struct {
	host     string
	port     int
	implicit bool // smtps: TLS from the first byte; else STARTTLS when offered
	user     string
	password string
}

// parseSMTPURL reads smtp://user:pass@host:port or smtps://…; the port
// defaults to 587 (smtp) or 465 (smtps).
func parseSMTPURL(s string) (smtpTarget, error) {
	bad := func(why string) (smtpTarget, error) {
		return smtpTarget{}, hitl.Errorf(hitl.EINVALID, "smtp_url must be smtp://user:password@host:port or smtps://…: %s", why)
	}
	u, err := url.Parse(s)
	if err != nil {
		return bad("it is not a URL")
	}
	t := smtpTarget{host: u.Hostname()}
	switch u.Scheme {
	case "smtp":
		t.port = 587
	case "smtps":
		t.port, t.implicit = 465, true
	default:
		return bad(fmt.Sprintf("the scheme is %q", u.Scheme))
	}
	if t.host == "" {
		return bad("the host is missing")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return bad("the port is not a number from 1 to 65535")
		}
		t.port = n
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" {
		return bad("it has a path or a query")
	}
	if u.User != nil {
		t.user = u.User.Username()
		t.password, _ = u.User.Password()
	}
	return t, nil
}

// redactURL returns an SMTP URL with its password masked.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), redactedPassword)
	}
	return u.String()
}

// unredactURL returns next with the password of cur when next carries the
// mask in its place (a URL sent back as GET showed it).
func unredactURL(next, cur string) string {
	n, err := url.Parse(next)
	if err != nil || n.User == nil {
		return next
	}
	if p, ok := n.User.Password(); !ok || p != redactedPassword {
		return next
	}
	c, err := url.Parse(cur)
	if err != nil || c.User == nil {
		return next
	}
	if p, ok := c.User.Password(); ok {
		n.User = url.UserPassword(n.User.Username(), p)
	}
	return n.String()
}

// cleanRecipients trims and drops empty addresses.
func cleanRecipients(list []string) []string {
	out := []string{}
	for _, a := range list {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}
