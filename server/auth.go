package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/auth"
	"github.com/hitl-sh/hitl/oidc"
	"github.com/hitl-sh/hitl/secret"
	"github.com/hitl-sh/hitl/ui"
	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/time/rate"
)

// Authentication defaults.
const (
	// DefaultSessionTTL is how long a login lasts.
	DefaultSessionTTL = 7 * 24 * time.Hour
	// DefaultLoginRate and DefaultLoginBurst limit login attempts per
	// client IP: five at once, then one every 12 seconds.
	DefaultLoginRate  = rate.Limit(5.0 / 60)
	DefaultLoginBurst = 5
	// DefaultRespondRate and DefaultRespondBurst limit answers per person
	// (all of a user's sessions) or per API token while authentication is
	// on.
	DefaultRespondRate  = rate.Limit(10)
	DefaultRespondBurst = 100
	// DefaultStreamRecheck is how often a live stream, a long-poll or a
	// tool call waiting for a person checks its credentials.
	DefaultStreamRecheck = 30 * time.Second

	// sessionCookie holds a browser's session secret.
	sessionCookie = "hitl_session"
	// localRecheck is how often a server in local mode looks for the
	// first user or token (created with the hitl CLI, maybe while it runs).
	localRecheck = time.Second
	// roleNone is the role of an anonymous request to a public route: it
	// may do nothing through the engine.
	roleNone hitl.Role = "none"
)

// AuthOptions configure who may use the server. With Identities: local
// mode (no login) until the first user or token exists, and then
// credentials on every request. The zero value stays in local mode.
type AuthOptions struct {
	// Identities holds users, tokens and sessions (the SQLite and
	// PostgreSQL stores keep them). Without identities the server stays
	// in local mode.
	Identities hitl.Identities
	// PublicURL is the URL people use to reach the server (for example
	// https://hitl.example.com). An https URL makes the session cookie
	// Secure; its host is accepted in local mode.
	PublicURL string
	// AnyHost accepts requests for any Host in local mode. Without it,
	// local mode answers only requests addressed to a loopback name or
	// address (or PublicURL's host), so that a web page cannot reach it
	// through DNS rebinding. hitl serve sets it with --insecure-no-auth.
	AnyHost bool
	// PublicMetrics serves /metrics without credentials; otherwise, once
	// authentication is on, only admins may read it.
	PublicMetrics bool
	// SessionTTL is how long a login lasts; 0 means DefaultSessionTTL.
	SessionTTL time.Duration
	// LoginRate and LoginBurst limit login attempts per client IP; 0
	// means the defaults, rate.Inf no limit.
	LoginRate  rate.Limit
	LoginBurst int
	// RespondRate and RespondBurst limit answers per person or per API
	// token (answerer) while authentication is on; 0 means the defaults,
	// rate.Inf no limit.
	RespondRate  rate.Limit
	RespondBurst int
	// StreamRecheck is how often a live stream (WebSocket, SSE), a
	// long-poll (GET /api/v1/interactions/{id}/wait), a hook waiting for
	// a decision or an MCP tool call in progress checks that its
	// credentials still hold, and ends when they do not: a revoked token,
	// a logout, a removed user, or the first user or token ending local
	// mode. 0 means DefaultStreamRecheck.
	StreamRecheck time.Duration
	// SignOn, when set, signs people in through an OpenID provider
	// (/login/oidc): the first sign-in creates their user, and each one
	// refreshes their groups and role. Every request needs credentials
	// from the start (no local mode).
	SignOn *oidc.Provider
	// SignOnKey seals the state of a sign-in in progress, kept in a
	// short-lived cookie so that any replica can finish it: the server's
	// 32-byte secret key, the same on every replica. Required with SignOn.
	SignOnKey []byte
	// NoPasswords turns signing in with a password off (with SignOn, to
	// have everyone come through the provider).
	NoPasswords bool
	// Now is the clock for sessions and limits; nil means time.Now.
	Now func() time.Time
}

// credential says how a request was authenticated.
type credential struct {
	kind  string // "local", "token", "session", "embed" or "" (anonymous)
	token *hitl.Token
	embed *hitl.EmbedToken // of kind "embed"
	hash  []byte           // of the token or the session secret
}

type credentialKey struct{}

// authenticator turns a request's credentials into a hitl.Caller.
type authenticator struct {
	ids           hitl.Identities
	log           *slog.Logger
	now           func() time.Time
	publicHost    string
	publicURL     string
	secureCookie  bool
	anyHost       bool
	publicMetrics bool
	ttl           time.Duration
	recheck       time.Duration
	login         *limiter
	respond       *limiter
	hashing       chan struct{} // bounds concurrent password checks (each takes 19 MiB)
	signOn        *oidc.Provider
	stateSeal     *secret.Cipher // seals the sign-in state cookie
	noPasswords   bool
	dummy         atomic.Pointer[string]

	required atomic.Bool  // credentials exist: every request needs them, from now on
	checked  atomic.Int64 // when local mode last looked for them (unix ns)
}

func newAuthenticator(o AuthOptions, log *slog.Logger) *authenticator {
	a := &authenticator{
		ids:           o.Identities,
		log:           log,
		now:           o.Now,
		anyHost:       o.AnyHost,
		publicMetrics: o.PublicMetrics,
		ttl:           o.SessionTTL,
		hashing:       make(chan struct{}, 4),
		noPasswords:   o.NoPasswords,
	}
	if o.SignOn != nil {
		c, err := secret.NewCipher(o.SignOnKey, "signon")
		if err == nil && o.Identities == nil {
			err = errors.New("the store keeps no users")
		}
		if err != nil {
			log.Error("single sign-on turned off: its key cannot seal the sign-in state", "error", err)
		} else {
			a.signOn, a.stateSeal = o.SignOn, c
			// People come through the provider: no local mode, even
			// before the first of them.
			a.required.Store(true)
		}
	}
	if a.now == nil {
		a.now = time.Now
	}
	if a.ttl <= 0 {
		a.ttl = DefaultSessionTTL
	}
	a.recheck = o.StreamRecheck
	if a.recheck <= 0 {
		a.recheck = DefaultStreamRecheck
	}
	if o.PublicURL != "" {
		u, err := url.Parse(o.PublicURL)
		if err != nil || u.Host == "" {
			log.Error("public URL is not a URL; ignored", "public_url", o.PublicURL)
		} else {
			a.publicHost = strings.ToLower(u.Hostname())
			a.publicURL = strings.TrimSuffix(o.PublicURL, "/")
			a.secureCookie = u.Scheme == "https"
		}
	}
	lr, lb := o.LoginRate, o.LoginBurst
	if lr == 0 {
		lr, lb = DefaultLoginRate, DefaultLoginBurst
	}
	rr, rb := o.RespondRate, o.RespondBurst
	if rr == 0 {
		rr, rb = DefaultRespondRate, DefaultRespondBurst
	}
	a.login = newLimiter(lr, lb, a.now)
	a.respond = newLimiter(rr, rb, a.now)
	return a
}

// isRequired reports whether requests need credentials: once a user or
// token exists, and from then on for the life of the server. In local
// mode it looks again at most every localRecheck.
func (a *authenticator) isRequired(ctx context.Context) (bool, error) {
	if a.required.Load() {
		return true, nil
	}
	if a.ids == nil {
		return false, nil
	}
	now := a.now().UnixNano()
	if last := a.checked.Load(); last != 0 && now-last < int64(localRecheck) {
		return false, nil
	}
	ok, err := a.ids.HasIdentities(ctx)
	if err != nil {
		return false, err
	}
	if ok {
		a.required.Store(true)
		a.log.Info("users or tokens exist: every request now needs credentials")
		return true, nil
	}
	a.checked.Store(now)
	return false, nil
}

// authenticate returns the caller of r, or writes the refusal and returns
// false: 401 for missing or bad credentials, 403 for a Host local mode does
// not answer. A public route (see isPublic) is served without credentials,
// as an anonymous caller who may do nothing through the engine.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (hitl.Caller, credential, bool) {
	a := s.auth
	required, err := a.isRequired(r.Context())
	if err != nil {
		s.log.Error("look for users and tokens", "error", err)
		s.writeError(w, r, hitl.Errorf(hitl.EUNAVAILABLE, "cannot check credentials: the database is not answering"))
		return hitl.Caller{}, credential{}, false
	}
	if !required {
		if !a.anyHost && !a.hostAllowed(r.Host) {
			s.writeError(w, r, hitl.Errorf(hitl.EFORBIDDEN,
				"host %q refused: without users or tokens hitl only answers requests for localhost (set HITL_PUBLIC_URL to add a name)", r.Host))
			return hitl.Caller{}, credential{}, false
		}
		return hitl.Caller{Name: hitl.LocalCaller, Role: hitl.RoleAdmin, Channel: hitl.ChannelAPI}, credential{kind: "local"}, true
	}
	c, cred, err := a.credentials(r)
	switch {
	case err == nil:
		return c, cred, true
	case isPublic(r, a.publicMetrics) && hitl.ErrorCode(err) == hitl.EUNAUTHORIZED:
		return hitl.Caller{Role: roleNone, Channel: hitl.ChannelAPI}, credential{}, true
	}
	s.writeError(w, r, err)
	return hitl.Caller{}, credential{}, false
}

// credentials reads the bearer token, or else the session cookie, of r.
func (a *authenticator) credentials(r *http.Request) (hitl.Caller, credential, error) {
	ctx := r.Context()
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return hitl.Caller{}, credential{}, hitl.Errorf(hitl.EUNAUTHORIZED, "the Authorization header must be \"Bearer <token>\"")
		}
		tok = strings.TrimSpace(tok)
		if strings.HasPrefix(tok, auth.EmbedTokenPrefix) {
			return a.embedCredentials(ctx, tok)
		}
		if !auth.LooksLikeToken(tok) {
			return hitl.Caller{}, credential{}, hitl.Errorf(hitl.EUNAUTHORIZED, "invalid token")
		}
		hash := auth.HashSecret(tok)
		t, err := a.ids.TokenByHash(ctx, hash)
		if errors.Is(err, hitl.ErrNotFound) {
			return hitl.Caller{}, credential{}, hitl.Errorf(hitl.EUNAUTHORIZED, "invalid token: revoked, or never issued by this server")
		} else if err != nil {
			return hitl.Caller{}, credential{}, err
		}
		return hitl.Caller{Name: t.Name, Role: t.Role, Groups: t.Groups, Channel: hitl.ChannelAPI}, credential{kind: "token", token: t, hash: hash}, nil
	}
	if tok, ok := embedProtocolToken(r); ok {
		return a.embedCredentials(ctx, tok)
	}
	if ck, err := r.Cookie(sessionCookie); err == nil && ck.Value != "" {
		hash := auth.HashSecret(ck.Value)
		_, u, err := a.ids.Session(ctx, hash, a.now())
		if errors.Is(err, hitl.ErrNotFound) {
			return hitl.Caller{}, credential{}, hitl.Errorf(hitl.EUNAUTHORIZED, "your session has ended; log in again")
		} else if err != nil {
			return hitl.Caller{}, credential{}, err
		}
		return hitl.Caller{Name: u.Name, Role: u.Role(), Groups: u.Groups, Channel: hitl.ChannelAPI}, credential{kind: "session", hash: hash}, nil
	}
	return hitl.Caller{}, credential{}, hitl.Errorf(hitl.EUNAUTHORIZED,
		"authentication required: send an API token (Authorization: Bearer hitl_…; the hitl CLI reads HITL_TOKEN) or log in at /login")
}

// admit applies the per-route rules after authentication, then serves r
// with next: /metrics for admins (unless public), the per-client limit on
// answers, and MCP sessions bound to the token that opened them.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, c hitl.Caller, cred credential, next http.Handler) {
	a := s.auth
	p := r.URL.Path
	if cred.kind == "embed" {
		if err := s.embedScope(r, c, cred); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	switch {
	case p == "/metrics" && !a.publicMetrics && c.Role != hitl.RoleAdmin:
		s.writeError(w, r, hitl.Errorf(hitl.EFORBIDDEN, "metrics are for admins"))
		return
	case isRespond(r) && cred.kind != "local":
		if ok, wait := a.respond.allow(answerer(r, c, cred)); !ok {
			s.writeError(w, r, retryLater(w, wait, "too many answers"))
			return
		}
	case (p == "/mcp" || strings.HasPrefix(p, "/mcp/")) && cred.kind != "local":
		// The MCP SDK runs a session's tool calls with the context of the
		// request that opened it; binding the session to the token keeps
		// another caller from using it.
		if cred.token == nil {
			s.writeError(w, r, hitl.Errorf(hitl.EUNAUTHORIZED, "MCP needs an API token (Authorization: Bearer hitl_…)"))
			return
		}
		id := cred.token.ID
		next = mcpauth.RequireBearerToken(func(context.Context, string, *http.Request) (*mcpauth.TokenInfo, error) {
			return &mcpauth.TokenInfo{UserID: "token:" + id}, nil
		}, &mcpauth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
	}
	ctx := hitl.WithCaller(r.Context(), c)
	ctx = context.WithValue(ctx, credentialKey{}, cred)
	// What waits on the caller's behalf (a long-poll, a hook, an MCP tool
	// call) ends when the credentials stop holding, as streams do.
	ctx = hitl.WithCredentialCheck(ctx, func(ctx context.Context) bool { return s.holds(ctx, cred) }, a.recheck)
	next.ServeHTTP(w, r.WithContext(ctx))
}

// answerer is whom an answer counts against in the answer limit: the
// person, across all of their sessions, or the API token. Not the address:
// behind a reverse proxy every person has the proxy's, and one busy
// answerer would hold back everyone else.
func answerer(r *http.Request, c hitl.Caller, cred credential) string {
	switch {
	case cred.kind == "token" && cred.token != nil:
		return "token:" + cred.token.ID
	case cred.kind == "session" || cred.kind == "embed":
		return "user:" + c.Name
	}
	return "ip:" + clientIP(r)
}

// retryLater sets Retry-After on w and returns the 429 error to write:
// msg, and when to try again.
func retryLater(w http.ResponseWriter, wait time.Duration, msg string) error {
	secs := max(int(wait.Seconds()+0.999), 1)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	return hitl.Errorf(hitl.ERATELIMITED, "%s; try again in %d s", msg, secs)
}

// isPublic reports whether r may be served without credentials: health
// checks, the login page and API, logout, the OpenAPI document, the
// receipts' public keys and their verification (which read no one's data:
// a receipt's claims are in the token), and the web
// inbox's static files (and its service worker) (the inbox then asks /api/v1/auth/me and shows its
// login view). Routes listed here must not act on the caller's behalf. A
// path that is not in canonical form is never public (the mux redirects it
// first).
func isPublic(r *http.Request, publicMetrics bool) bool {
	p := r.URL.Path
	if path.Clean(p) != strings.TrimSuffix(p, "/") && p != "/" {
		return false
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		switch p {
		case "/", "/healthz", "/readyz", "/login", signOnStartPath, oidc.CallbackPath, authMethodsPath, loginCSSPath, openAPIPath, ui.ServiceWorkerPath, ui.EmbedScriptPath, jwksPath:
			return true
		case "/metrics":
			return publicMetrics
		}
		return strings.HasPrefix(p, "/assets/")
	case http.MethodPost:
		switch p {
		case "/login", "/logout", "/api/v1/auth/login", "/api/v1/auth/logout", receiptVerifyPath:
			return true
		}
	}
	return false
}

// isRespond reports whether r answers an interaction.
func isRespond(r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	p := r.URL.Path
	return p == "/api/human-feedback/submit" || p == "/api/v1/agents/hitl/respond" ||
		strings.HasPrefix(p, "/api/v1/interactions/") && strings.HasSuffix(p, "/respond")
}

// hostAllowed reports whether local mode answers a request for host: a
// loopback name or address, or the public URL's host. A browser always
// sends the name it resolved, so a page on another site that re-points
// its own name at 127.0.0.1 (DNS rebinding) is refused.
func (a *authenticator) hostAllowed(host string) bool {
	if host == "" {
		return true // HTTP/1.0 without Host: not a browser
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	switch {
	case host == "localhost" || strings.HasSuffix(host, ".localhost"):
		return true
	case a.publicHost != "" && host == a.publicHost:
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// credentialFrom returns how the request in ctx was authenticated.
func credentialFrom(ctx context.Context) credential {
	c, _ := ctx.Value(credentialKey{}).(credential)
	return c
}

// streamRecheck returns a ticker for a live stream's credential checks.
func (s *Server) streamRecheck() *time.Ticker {
	return time.NewTicker(s.auth.recheck)
}

// stillValid reports whether the credentials a live stream was opened
// with still hold: the token is not revoked, the session has not ended
// (logout, expiry, a new password, a removed user), and local mode has not
// ended. When the database does not answer it says yes, rather than drop
// every stream at once.
func (s *Server) stillValid(ctx context.Context) bool {
	return s.holds(ctx, credentialFrom(ctx))
}

// holds reports whether cred still holds (see stillValid).
func (s *Server) holds(ctx context.Context, cred credential) bool {
	a := s.auth
	var err error
	switch cred.kind {
	case "local":
		required, err := a.isRequired(ctx)
		return err != nil || !required
	case "token":
		_, err = a.ids.TokenByHash(ctx, cred.hash)
	case "session":
		_, _, err = a.ids.Session(ctx, cred.hash, a.now())
	case "embed":
		_, _, err = a.ids.EmbedTokenByHash(ctx, cred.hash, a.now())
	default:
		return true
	}
	return !errors.Is(err, hitl.ErrNotFound)
}
