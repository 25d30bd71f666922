// Package oidc signs people in through an OpenID Connect provider (Google,
// Microsoft Entra, Okta, Keycloak, Dex, …): the authorization code flow
// with PKCE, state and nonce, and ID tokens verified against the
// provider's discovery document and keys (coreos/go-oidc). It also decides
// who may come in and as what: allowed email domains, and the provider's
// groups mapped to hitl's roles.
package oidc

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	coreos "github.com/coreos/go-oidc/v3/oidc"
	"github.com/hitl-sh/hitl"
	"golang.org/x/oauth2"
)

// CallbackPath is where the provider sends people back to, on hitl's
// public URL: the redirect URL to register with the provider is the
// public URL followed by it.
const CallbackPath = "/login/oidc/callback"

// DefaultScopes are the scopes asked for when none are configured.
var DefaultScopes = []string{coreos.ScopeOpenID, "email", "profile"}

// DefaultGroupsClaim is the ID token claim read for groups when none is
// configured.
const DefaultGroupsClaim = "groups"

// discoveryTimeout bounds one fetch of the discovery document.
const discoveryTimeout = 10 * time.Second

// Config configures sign-in through one provider.
type Config struct {
	// Issuer is the provider's issuer URL, as its discovery document
	// (Issuer + /.well-known/openid-configuration) states it.
	Issuer string
	// ClientID and ClientSecret are hitl's credentials at the provider.
	ClientID     string
	ClientSecret string
	// RedirectURL is hitl's public URL followed by CallbackPath.
	RedirectURL string
	// Scopes asked for; nil means DefaultScopes. openid is always asked.
	Scopes []string
	// Name is the provider's name on the login page ("Sign in with
	// Name"); "" means the issuer's host.
	Name string
	// AllowedDomains are the email domains whose people may sign in
	// (their verified email must end in @domain); none means any.
	AllowedDomains []string
	// GroupsClaim is the ID token claim that lists a person's groups;
	// "" means DefaultGroupsClaim.
	GroupsClaim string
	// GroupRoles maps provider groups (as GroupName makes them) to hitl
	// roles (responder or admin): a person in a group mapped to admin is
	// an admin, else one in a group mapped to responder is a responder.
	GroupRoles map[string]hitl.Role
	// DefaultRole is the role of a person in no mapped group: responder,
	// or "" to refuse them.
	DefaultRole hitl.Role
	// HTTPClient reaches the provider; nil means http.DefaultClient.
	HTTPClient *http.Client
	// Now is the clock ID tokens are checked against; nil means
	// time.Now.
	Now func() time.Time
}

// Provider signs people in through one OpenID provider. Its discovery
// document is fetched on first use, and again after a failure.
type Provider struct {
	cfg    Config
	client *http.Client

	mu        sync.Mutex
	discovery *discovered // nil until fetched
}

// discovered is what the discovery document gave.
type discovered struct {
	provider   *coreos.Provider
	verifier   *coreos.IDTokenVerifier
	oauth      oauth2.Config
	endSession string
}

// New checks cfg and returns its Provider. It does not reach the provider:
// Discover (or the first sign-in) does.
func New(cfg Config) (*Provider, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.GroupsClaim == "" {
		cfg.GroupsClaim = DefaultGroupsClaim
	}
	if len(cfg.Scopes) == 0 {
		cfg.Scopes = DefaultScopes
	}
	if !slices.Contains(cfg.Scopes, coreos.ScopeOpenID) {
		cfg.Scopes = append([]string{coreos.ScopeOpenID}, cfg.Scopes...)
	}
	if cfg.Name == "" {
		u, _ := url.Parse(cfg.Issuer)
		cfg.Name = u.Hostname()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	roles := make(map[string]hitl.Role, len(cfg.GroupRoles))
	for g, r := range cfg.GroupRoles {
		roles[GroupName(g)] = r
	}
	cfg.GroupRoles = roles
	p := &Provider{cfg: cfg, client: cfg.HTTPClient}
	if p.client == nil {
		p.client = http.DefaultClient
	}
	return p, nil
}

// check reports what is wrong with cfg, naming the setting.
func (cfg *Config) check() error {
	if u, err := url.Parse(cfg.Issuer); err != nil || u.Host == "" || u.Scheme != "https" && u.Scheme != "http" {
		return fmt.Errorf("the OpenID issuer must be an http(s) URL; got %q", cfg.Issuer)
	}
	if cfg.ClientID == "" {
		return errors.New("the OpenID client ID is required with an issuer")
	}
	if u, err := url.Parse(cfg.RedirectURL); err != nil || u.Host == "" || !strings.HasSuffix(u.Path, CallbackPath) {
		return fmt.Errorf("the OpenID redirect URL must be hitl's public URL followed by %s; got %q", CallbackPath, cfg.RedirectURL)
	}
	for g, r := range cfg.GroupRoles {
		if r != hitl.RoleResponder && r != hitl.RoleAdmin {
			return fmt.Errorf("group %q maps to role %q: groups map to responder or admin", g, r)
		}
	}
	if cfg.DefaultRole != "" && cfg.DefaultRole != hitl.RoleResponder {
		return fmt.Errorf("the default role of people in no mapped group is responder or none; got %q", cfg.DefaultRole)
	}
	for _, d := range cfg.AllowedDomains {
		if d == "" || strings.ContainsAny(d, "@ /") {
			return fmt.Errorf("an allowed email domain is a domain such as example.com; got %q", d)
		}
	}
	return nil
}

// Name returns the provider's name, for "Sign in with Name".
func (p *Provider) Name() string { return p.cfg.Name }

// RedirectURL returns the URL the provider sends people back to.
func (p *Provider) RedirectURL() string { return p.cfg.RedirectURL }

// Discover fetches the discovery document, unless it was fetched already.
// The issuer it states must be the configured one.
func (p *Provider) Discover(ctx context.Context) error {
	_, err := p.discover(ctx)
	return err
}

// discover returns the discovery document's endpoints and keys.
func (p *Provider) discover(ctx context.Context) (*discovered, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.discovery != nil {
		return p.discovery, nil
	}
	ctx, cancel := context.WithTimeout(coreos.ClientContext(ctx, p.client), discoveryTimeout)
	defer cancel()
	prov, err := coreos.NewProvider(ctx, p.cfg.Issuer)
	if err != nil {
		return nil, hitl.Errorf(hitl.EUNAVAILABLE, "the identity provider %s could not be used: %v", p.cfg.Issuer, err)
	}
	var extra struct {
		EndSession string `json:"end_session_endpoint"`
	}
	// Optional: a discovery document that states it in another shape only
	// leaves sign-out at hitl (no link to the provider's sign-out).
	if err := prov.Claims(&extra); err != nil {
		extra.EndSession = ""
	}
	d := &discovered{
		provider: prov,
		verifier: prov.Verifier(&coreos.Config{ClientID: p.cfg.ClientID, Now: p.cfg.Now}),
		oauth: oauth2.Config{
			ClientID:     p.cfg.ClientID,
			ClientSecret: p.cfg.ClientSecret,
			Endpoint:     prov.Endpoint(),
			RedirectURL:  p.cfg.RedirectURL,
			Scopes:       p.cfg.Scopes,
		},
		endSession: extra.EndSession,
	}
	p.discovery = d
	return d, nil
}

// AuthCodeURL returns the provider's URL that starts a sign-in: the
// authorization code flow with state, nonce and a PKCE challenge made
// from verifier.
func (p *Provider) AuthCodeURL(ctx context.Context, state, nonce, verifier string) (string, error) {
	d, err := p.discover(ctx)
	if err != nil {
		return "", err
	}
	return d.oauth.AuthCodeURL(state, coreos.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), nil
}

// Exchange trades the code the provider sent back for tokens, and returns
// the person the ID token names once it is verified: signed by the
// provider's keys, issued by the configured issuer, for this client, not
// expired, and carrying nonce. Every refusal is EUNAUTHORIZED and says
// what was wrong.
func (p *Provider) Exchange(ctx context.Context, code, verifier, nonce string) (*Identity, error) {
	d, err := p.discover(ctx)
	if err != nil {
		return nil, err
	}
	ctx = coreos.ClientContext(ctx, p.client)
	tok, err := d.oauth.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		return nil, hitl.Errorf(hitl.EUNAUTHORIZED, "the identity provider refused the sign-in code (used already, expired, or for another client): %s", exchangeError(err))
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		return nil, hitl.Errorf(hitl.EUNAUTHORIZED, "the identity provider sent no ID token")
	}
	idt, err := d.verifier.Verify(ctx, raw)
	if err != nil {
		return nil, hitl.Errorf(hitl.EUNAUTHORIZED, "the ID token was refused: %v", err)
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(nonce)) != 1 || nonce == "" {
		return nil, hitl.Errorf(hitl.EUNAUTHORIZED, "the ID token was refused: it was not issued for this sign-in (nonce mismatch)")
	}
	id, err := p.identity(idt)
	if err != nil {
		return nil, err
	}
	if id.Email == "" || id.Name == "" {
		if err := p.addUserInfo(ctx, d, tok, id); err != nil {
			return nil, err
		}
	}
	return id, nil
}

// addUserInfo completes id from the provider's userinfo endpoint, for a
// provider that puts the email and profile claims there rather than in
// the ID token. The answer must be about the ID token's subject.
func (p *Provider) addUserInfo(ctx context.Context, d *discovered, tok *oauth2.Token, id *Identity) error {
	var ep struct {
		UserInfo string `json:"userinfo_endpoint"`
	}
	if err := d.provider.Claims(&ep); err != nil || ep.UserInfo == "" {
		return nil
	}
	info, err := d.provider.UserInfo(ctx, oauth2.StaticTokenSource(tok))
	if err != nil {
		return hitl.Errorf(hitl.EUNAVAILABLE, "the identity provider's userinfo endpoint did not answer: %v", err)
	}
	if info.Subject != id.Subject {
		return hitl.Errorf(hitl.EUNAUTHORIZED, "the identity provider's userinfo is about another subject than the ID token")
	}
	var c claims
	if err := info.Claims(&c); err != nil {
		return hitl.Errorf(hitl.EUNAUTHORIZED, "the identity provider's userinfo could not be read: %v", err)
	}
	if id.Email == "" && c.Email != "" {
		id.Email = strings.TrimSpace(c.Email)
		id.EmailVerified = c.EmailVerified == nil || *c.EmailVerified
	}
	if id.Name == "" {
		id.Name = c.Name
	}
	if id.Username == "" {
		id.Username = c.Username
	}
	return nil
}

// exchangeError is what the token endpoint said, without the response
// body beyond its error code and description.
func exchangeError(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		if re.ErrorCode != "" {
			if re.ErrorDescription != "" {
				return re.ErrorCode + ": " + re.ErrorDescription
			}
			return re.ErrorCode
		}
		if re.Response != nil {
			return re.Response.Status
		}
	}
	return err.Error()
}

// EndSessionURL returns the provider's logout URL (RP-initiated logout),
// sending people back to after; "" when the provider has none or was not
// reached yet.
func (p *Provider) EndSessionURL(after string) string {
	p.mu.Lock()
	d := p.discovery
	p.mu.Unlock()
	if d == nil || d.endSession == "" {
		return ""
	}
	u, err := url.Parse(d.endSession)
	if err != nil {
		return ""
	}
	q := u.Query()
	q.Set("client_id", p.cfg.ClientID)
	if after != "" {
		q.Set("post_logout_redirect_uri", after)
	}
	u.RawQuery = q.Encode()
	return u.String()
}
