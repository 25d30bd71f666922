package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/oidc"
)

// signOnConfig is what hitl serve's flags say about signing in through an
// OpenID provider, and with a password.
type signOnConfig struct {
	issuer, clientID, clientSecret, name string
	scopes, domains, groupsClaim         string
	groupRoles, defaultRole              string
	noPasswords                          *envBool
}

// signOnFlags adds hitl serve's single sign-on flags to fs.
func signOnFlags(fs *flag.FlagSet) *signOnConfig {
	c := &signOnConfig{}
	fs.StringVar(&c.issuer, "oidc-issuer", envOr("HITL_OIDC_ISSUER", ""), "the OpenID provider's issuer `URL`, such as https://accounts.google.com:\npeople sign in through it (HITL_OIDC_ISSUER)")
	fs.StringVar(&c.clientID, "oidc-client-id", envOr("HITL_OIDC_CLIENT_ID", ""), "hitl's client `ID` at the OpenID provider (HITL_OIDC_CLIENT_ID)")
	// The secret is read from the environment after parsing, not given as
	// a flag default, which --help would print.
	fs.StringVar(&c.clientSecret, "oidc-client-secret", "", "hitl's client `secret` at the OpenID provider; prefer the variable, flags\nshow in ps (HITL_OIDC_CLIENT_SECRET)")
	fs.StringVar(&c.name, "oidc-name", envOr("HITL_OIDC_NAME", ""), "the provider's `name` on the login page (\"Sign in with NAME\"); default\nthe issuer's host (HITL_OIDC_NAME)")
	fs.StringVar(&c.scopes, "oidc-scopes", envOr("HITL_OIDC_SCOPES", strings.Join(oidc.DefaultScopes, " ")), "`scopes` to ask for, separated by spaces (HITL_OIDC_SCOPES)")
	fs.StringVar(&c.domains, "oidc-allowed-domains", envOr("HITL_OIDC_ALLOWED_DOMAINS", ""), "comma-separated email `domains` whose people may sign in (their verified\nemail); default any (HITL_OIDC_ALLOWED_DOMAINS)")
	fs.StringVar(&c.groupsClaim, "oidc-groups-claim", envOr("HITL_OIDC_GROUPS_CLAIM", oidc.DefaultGroupsClaim), "the ID token `claim` that lists a person's groups; they become the\nperson's hitl groups at each sign-in (HITL_OIDC_GROUPS_CLAIM)")
	fs.StringVar(&c.groupRoles, "oidc-group-roles", envOr("HITL_OIDC_GROUP_ROLES", ""), "comma-separated `group=role` pairs mapping provider groups to hitl roles\n(responder or admin), such as ops=responder,platform=admin (HITL_OIDC_GROUP_ROLES)")
	fs.StringVar(&c.defaultRole, "oidc-default-role", envOr("HITL_OIDC_DEFAULT_ROLE", ""), "the `role` of a person in no mapped group: responder, or none to refuse\nthem; default responder without --oidc-group-roles, else none\n(HITL_OIDC_DEFAULT_ROLE)")
	c.noPasswords = envBoolVar(fs, "no-password-login", "HITL_NO_PASSWORD_LOGIN", "turn logging in with a password off, leaving only the OpenID provider\n(--oidc-issuer)")
	return c
}

// enabled reports whether an OpenID provider is configured.
func (c *signOnConfig) enabled() bool { return c.issuer != "" }

// config returns the provider's configuration, hitl's redirect URL being
// under base (the public URL).
func (c *signOnConfig) config(base string) (oidc.Config, error) {
	if c.clientSecret == "" {
		c.clientSecret = os.Getenv("HITL_OIDC_CLIENT_SECRET")
	}
	cfg := oidc.Config{
		Issuer:         strings.TrimSpace(c.issuer),
		ClientID:       strings.TrimSpace(c.clientID),
		ClientSecret:   c.clientSecret,
		RedirectURL:    strings.TrimSuffix(base, "/") + oidc.CallbackPath,
		Scopes:         strings.Fields(c.scopes),
		Name:           strings.TrimSpace(c.name),
		AllowedDomains: splitList(c.domains),
		GroupsClaim:    strings.TrimSpace(c.groupsClaim),
	}
	for _, pair := range splitList(c.groupRoles) {
		g, r, ok := strings.Cut(pair, "=")
		g, r = strings.TrimSpace(g), strings.TrimSpace(r)
		if !ok || g == "" {
			return cfg, fmt.Errorf("--oidc-group-roles takes group=role pairs, such as ops=responder; got %q", pair)
		}
		if cfg.GroupRoles == nil {
			cfg.GroupRoles = map[string]hitl.Role{}
		}
		cfg.GroupRoles[g] = hitl.Role(r)
	}
	switch strings.TrimSpace(c.defaultRole) {
	case "":
		if len(cfg.GroupRoles) == 0 {
			cfg.DefaultRole = hitl.RoleResponder
		}
	case "none":
	case string(hitl.RoleResponder):
		cfg.DefaultRole = hitl.RoleResponder
	default:
		return cfg, fmt.Errorf("--oidc-default-role must be responder or none; got %q", c.defaultRole)
	}
	return cfg, nil
}

// check validates the flags.
func (c *signOnConfig) check() error {
	if err := c.noPasswords.err; err != nil {
		return err
	}
	if !c.enabled() {
		if c.noPasswords.on() {
			return errors.New("--no-password-login needs an OpenID provider (--oidc-issuer): nobody could log in")
		}
		return nil
	}
	cfg, err := c.config("http://localhost")
	if err != nil {
		return err
	}
	if _, err := oidc.New(cfg); err != nil {
		return fmt.Errorf("single sign-on: %w", err)
	}
	return nil
}

// provider returns the OpenID provider hitl serve signs people in
// through, and the key that seals sign-ins in progress (the server's
// secret key: see slackConfig.secretKey); nil when none is configured.
// It logs the redirect URL to register with the provider, and fetches the
// discovery document once, to say early when the provider cannot be used.
func (c *signOnConfig) provider(ctx context.Context, log *slog.Logger, sl *slackConfig, db, publicURL string, addr net.Addr) (*oidc.Provider, []byte, error) {
	if !c.enabled() {
		return nil, nil, nil
	}
	key, err := sl.secretKey(log, db, "")
	if err != nil {
		return nil, nil, fmt.Errorf("secret key: %w", err)
	}
	if key == nil {
		return nil, nil, errors.New("signing in through an OpenID provider with PostgreSQL needs the server's secret key, the same on every replica: set HITL_SECRET_KEY (openssl rand -base64 32) or --secret-key-file")
	}
	base := publicURL
	if base == "" {
		base = listenURL(addr)
	}
	cfg, err := c.config(base)
	if err != nil {
		return nil, nil, err
	}
	p, err := oidc.New(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("single sign-on: %w", err)
	}
	log.Info("single sign-on: register this redirect URL with the OpenID provider", "redirect_url", p.RedirectURL(), "issuer", cfg.Issuer, "client_id", cfg.ClientID)
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := p.Discover(dctx); err != nil {
		log.Warn("single sign-on: the OpenID provider cannot be used yet; sign-ins will try again", "error", hitl.ErrorMessage(err))
	}
	return p, key, nil
}
