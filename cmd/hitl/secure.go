package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/server"
	"golang.org/x/time/rate"
)

// authConfig is what hitl serve's flags say about authentication.
type authConfig struct {
	publicURL     string
	insecure      *envBool
	publicMetrics *envBool
	answerRate    string // answers per second per person or token; "0" lifts the limit
	// embedOrigins may embed the <hitl-prompt> element (--embed-origin).
	embedOrigins []string
	// signOn is sign-in through an OpenID provider, and with passwords.
	signOn *signOnConfig
}

// authFlags adds hitl serve's authentication flags to fs.
func authFlags(fs *flag.FlagSet) *authConfig {
	c := &authConfig{}
	fs.StringVar(&c.publicURL, "public-url", envOr("HITL_PUBLIC_URL", ""), "the `URL` people reach the server at; https makes login cookies Secure (HITL_PUBLIC_URL)")
	c.insecure = envBoolVar(fs, "insecure-no-auth", "HITL_INSECURE_NO_AUTH", "listen on a non-loopback address with no users or tokens: anyone who\ncan reach it may answer every question")
	c.publicMetrics = envBoolVar(fs, "public-metrics", "HITL_PUBLIC_METRICS", "serve /metrics without credentials; otherwise admins only")
	c.embedOrigins = strings.Fields(strings.ReplaceAll(envOr("HITL_EMBED_ORIGIN", ""), ",", " "))
	fromEnv := true
	fs.Func("embed-origin", "an `origin` (https://chat.example.com) whose pages may embed the\n<hitl-prompt> element; repeatable, or separated by spaces in the variable; none\nby default (HITL_EMBED_ORIGIN)", func(v string) error {
		if fromEnv {
			c.embedOrigins, fromEnv = nil, false
		}
		c.embedOrigins = append(c.embedOrigins, v)
		return nil
	})
	fs.StringVar(&c.answerRate, "answer-rate", envOr("HITL_ANSWER_RATE", "10"), "answers per second each person and each API token may send while\nauthentication is on, in bursts of ten seconds' worth; 0 lifts the limit (HITL_ANSWER_RATE)")
	return c
}

// respondLimit is the answer limit --answer-rate asks for: rate.Inf for 0.
func (c *authConfig) respondLimit() (rate.Limit, int, error) {
	v, err := strconv.ParseFloat(c.answerRate, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, 0, fmt.Errorf("--answer-rate must be a number of answers per second, 0 or more; got %q", c.answerRate)
	}
	if v == 0 {
		return rate.Inf, 0, nil
	}
	return rate.Limit(v), max(1, int(10*v)), nil
}

// check validates the flags.
func (c *authConfig) check() error {
	if _, _, err := c.respondLimit(); err != nil {
		return err
	}
	for _, o := range c.embedOrigins {
		u, err := url.Parse(o)
		if err != nil || u.Host == "" || u.Scheme != "http" && u.Scheme != "https" || u.User != nil ||
			u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("--embed-origin must be an origin such as https://chat.example.com; got %q", o)
		}
	}
	if c.publicURL == "" {
		return nil
	}
	u, err := url.Parse(c.publicURL)
	if err != nil || u.Host == "" || u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("--public-url must be an http:// or https:// URL; got %q", c.publicURL)
	}
	return nil
}

// options decides how the server listening on addr over store
// authenticates (secure defaults): with users or tokens in the database,
// every request needs credentials; without, a loopback address runs in
// local mode (no login), and any other address is refused unless
// --insecure-no-auth says otherwise.
func (c *authConfig) options(ctx context.Context, log *slog.Logger, addr net.Addr, store hitl.Store, db string, ch *slackConfig) (server.AuthOptions, error) {
	opts := server.AuthOptions{PublicURL: c.publicURL, PublicMetrics: c.publicMetrics.on()}
	var err error
	if opts.RespondRate, opts.RespondBurst, err = c.respondLimit(); err != nil {
		return opts, err
	}
	has := false
	if ids, ok := store.(hitl.Identities); ok {
		opts.Identities = ids
		if has, err = ids.HasIdentities(ctx); err != nil {
			return opts, fmt.Errorf("look for users and tokens: %w", err)
		}
	}
	if c.signOn != nil && opts.Identities != nil {
		if opts.SignOn, opts.SignOnKey, err = c.signOn.provider(ctx, log, ch, db, c.publicURL, addr); err != nil {
			return opts, err
		}
		opts.NoPasswords = c.signOn.noPasswords.on()
	}
	switch {
	case has || opts.SignOn != nil:
		log.Info("authentication on: every request needs an API token or a login")
	case isLoopback(addr):
		log.Info("no users or tokens: local mode, no login, for this machine only; add some with hitl user add or hitl token create")
	case c.insecure.on():
		opts.AnyHost = true
		log.Warn("no users or tokens and --insecure-no-auth: anyone who can reach " + addr.String() + " may ask and answer every question")
	default:
		return opts, fmt.Errorf("refusing to listen on %s without authentication: anyone who could reach it could answer every question.\n"+
			"Create an admin or an API token first (the server need not run):\n"+
			"  hitl user add alice --admin --db %s\n"+
			"  hitl token create --name build-bot --role agent --db %s\n"+
			"or listen on a loopback address (--addr 127.0.0.1:7878), or pass --insecure-no-auth (HITL_INSECURE_NO_AUTH=1)",
			addr, shellQuote(redactDB(db)), shellQuote(redactDB(db)))
	}
	return opts, nil
}

// isLoopback reports whether a listening address takes connections from
// this machine only.
func isLoopback(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// shellQuote quotes s for a shell command line when it needs it.
func shellQuote(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '/' || r == '_' || r == '-') {
			return strconv.Quote(s)
		}
	}
	return s
}
