package server

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/hitl-sh/hitl"
	"golang.org/x/oauth2"
)

// Sign-in through an OpenID provider: GET /login/oidc sends the browser
// to the provider with a new state, nonce and PKCE challenge, kept sealed
// in a short-lived cookie (any replica can open it, with the server's
// secret key); the provider sends it back to /login/oidc/callback, where
// the state is checked and used once, the code exchanged and the ID token
// verified, the person admitted (domains, groups to roles) and their user
// created or refreshed, and a session started. Every refusal is the login
// page with the reason, and no session cookie.

const (
	// signOnStartPath starts a sign-in through the provider.
	signOnStartPath = "/login/oidc"
	// signOnCookie holds the sealed state of a sign-in in progress.
	signOnCookie = "hitl_oidc"
	// signOnTTL is how long a sign-in may take at the provider.
	signOnTTL = 10 * time.Minute
	// signOnSealField is the sealed cookie's field name (additional data).
	signOnSealField = "sign-in state"
	// authMethodsPath says how people may sign in.
	authMethodsPath = "/api/v1/auth/methods"
)

// authMethods is GET /api/v1/auth/methods: the ways to sign in, for the
// inbox's sign-in view.
type authMethods struct {
	Password bool        `json:"password"`
	SignOn   *signOnLink `json:"sign_on,omitempty"`
}

// signOnLink is the OpenID provider's way in.
type signOnLink struct {
	Name string `json:"name"`
	URL  string `json:"url"` // takes ?next=PATH
}

// handleAuthMethods serves GET /api/v1/auth/methods, to anyone.
func (s *Server) handleAuthMethods(w http.ResponseWriter, r *http.Request) error {
	m := authMethods{Password: !s.auth.noPasswords}
	if s.auth.signOn != nil {
		m.SignOn = &signOnLink{Name: s.auth.signOn.Name(), URL: signOnStartPath}
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, m)
	return nil
}

// signOnState is a sign-in in progress, sealed in signOnCookie.
type signOnState struct {
	State    string    `json:"state"`
	Nonce    string    `json:"nonce"`
	Verifier string    `json:"verifier"`
	Next     string    `json:"next"`
	Expires  time.Time `json:"expires"`
}

// signOnRoutes registers the sign-in through the provider (404 pages
// without one).
func (s *Server) signOnRoutes() {
	s.mux.HandleFunc("GET "+signOnStartPath, s.handleSignOnStart)
	s.mux.HandleFunc("GET /login/oidc/callback", s.handleSignOnCallback)
}

// signOnName is the provider's name, for messages.
func (a *authenticator) signOnName() string {
	if a.signOn == nil {
		return "your identity provider (none is configured)"
	}
	return a.signOn.Name()
}

// publicLoginURL is the login page's absolute URL, where the provider's
// logout sends people back to; "" without a public URL.
func (a *authenticator) publicLoginURL() string {
	if a.publicURL == "" {
		return ""
	}
	return a.publicURL + "/login"
}

// notConfigured answers a sign-on route of a server without a provider.
func (s *Server) notConfigured(w http.ResponseWriter, r *http.Request) bool {
	if s.auth.signOn != nil {
		return false
	}
	v := s.newLoginView("")
	v.Error = "Signing in through an identity provider is not set up on this server (hitl serve --oidc-issuer)."
	renderLogin(w, http.StatusNotFound, v)
	return true
}

// handleSignOnStart serves GET /login/oidc: a redirect to the provider.
func (s *Server) handleSignOnStart(w http.ResponseWriter, r *http.Request) {
	if s.notConfigured(w, r) {
		return
	}
	a := s.auth
	st := signOnState{
		State:    randomToken(),
		Nonce:    randomToken(),
		Verifier: oauth2.GenerateVerifier(),
		Next:     safeNext(r.URL.Query().Get("next")),
		Expires:  a.now().Add(signOnTTL),
	}
	to, err := a.signOn.AuthCodeURL(r.Context(), st.State, st.Nonce, st.Verifier)
	if err != nil {
		s.refuseSignOn(w, r, err)
		return
	}
	plain, err := json.Marshal(st)
	if err != nil {
		s.refuseSignOn(w, r, err)
		return
	}
	sealed, err := a.stateSeal.Seal(signOnSealField, string(plain))
	if err != nil {
		s.refuseSignOn(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name:     signOnCookie,
		Value:    sealed,
		Path:     signOnStartPath,
		MaxAge:   int(signOnTTL.Seconds()),
		HttpOnly: true,
		Secure:   a.secureCookie || r.TLS != nil,
		// Lax: the provider's redirect back is a top-level GET, which
		// carries it.
		SameSite: http.SameSiteLaxMode,
	})
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// handleSignOnCallback serves GET /login/oidc/callback: the provider's
// answer, checked, then a session and a redirect to where the person was
// going.
func (s *Server) handleSignOnCallback(w http.ResponseWriter, r *http.Request) {
	if s.notConfigured(w, r) {
		return
	}
	a := s.auth
	// The state is for one attempt: whatever happens next, it goes.
	http.SetCookie(w, &http.Cookie{Name: signOnCookie, Value: "", Path: signOnStartPath, MaxAge: -1,
		HttpOnly: true, Secure: a.secureCookie || r.TLS != nil, SameSite: http.SameSiteLaxMode})
	ip := clientIP(r)
	if ok, wait := a.login.allow(ip); !ok {
		s.refuseSignOn(w, r, retryLater(w, wait, "too many sign-ins from this address"))
		return
	}
	u, next, err := s.signOnCallback(r)
	if err != nil {
		s.log.Warn("sign-in through the identity provider refused", "remote_addr", ip, "reason", hitl.ErrorMessage(err))
		s.refuseSignOn(w, r, err)
		return
	}
	if err := s.startSession(w, r, u); err != nil {
		s.refuseSignOn(w, r, err)
		return
	}
	s.log.Info("login", "username", u.Name, "remote_addr", ip, "via", "oidc")
	if next == "" {
		next = "/"
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// signOnCallback checks the provider's answer in r and returns the user
// it signs in, and the page to go on to.
func (s *Server) signOnCallback(r *http.Request) (*hitl.User, string, error) {
	a := s.auth
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		msg := e
		if d := q.Get("error_description"); d != "" {
			msg += ": " + d
		}
		return nil, "", hitl.Errorf(hitl.EUNAUTHORIZED, "the identity provider did not sign you in (%s)", auditName(msg))
	}
	ck, err := r.Cookie(signOnCookie)
	if err != nil || ck.Value == "" {
		return nil, "", hitl.Errorf(hitl.EUNAUTHORIZED, "this sign-in was not started in this browser, or took more than %d minutes; start again", int(signOnTTL.Minutes()))
	}
	plain, err := a.stateSeal.Open(signOnSealField, ck.Value)
	if err != nil {
		return nil, "", hitl.Errorf(hitl.EUNAUTHORIZED, "this sign-in's state cannot be read (altered, or sealed with another key); start again")
	}
	var st signOnState
	if err := json.Unmarshal([]byte(plain), &st); err != nil {
		return nil, "", hitl.Errorf(hitl.EUNAUTHORIZED, "this sign-in's state cannot be read; start again")
	}
	if !a.now().Before(st.Expires) {
		return nil, "", hitl.Errorf(hitl.EUNAUTHORIZED, "this sign-in took more than %d minutes; start again", int(signOnTTL.Minutes()))
	}
	if got := q.Get("state"); got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(st.State)) != 1 {
		return nil, "", hitl.Errorf(hitl.EUNAUTHORIZED, "the identity provider's answer is not for this sign-in (state mismatch); start again")
	}
	code := q.Get("code")
	if code == "" {
		return nil, "", hitl.Errorf(hitl.EUNAUTHORIZED, "the identity provider sent no sign-in code")
	}
	hash := sha256.Sum256([]byte(st.State))
	if err := a.ids.UseSignInState(r.Context(), hash[:], st.Expires); err != nil {
		if hitl.ErrorCode(err) == hitl.ECONFLICT {
			return nil, "", hitl.Errorf(hitl.EUNAUTHORIZED, "this sign-in was used already; start again")
		}
		return nil, "", err
	}
	id, err := a.signOn.Exchange(r.Context(), code, st.Verifier, st.Nonce)
	if err != nil {
		return nil, "", err
	}
	if len(id.Dropped) > 0 {
		s.log.Warn("provider groups that are not valid hitl group names were left out (letters, digits and . _ @ + -, at most 64)", "subject", id.Subject, "groups", id.Dropped)
	}
	want, err := a.signOn.Admit(id)
	if err != nil {
		return nil, "", err
	}
	u, err := a.ids.SignInUser(r.Context(), want)
	if err != nil {
		return nil, "", err
	}
	a.required.Store(true) // a user exists now: local mode is over
	return u, st.Next, nil
}

// refuseSignOn shows the login page with why the sign-in was refused, and
// the way to start again. Errors that are not the person's to act on are
// logged and shown as internal.
func (s *Server) refuseSignOn(w http.ResponseWriter, r *http.Request, err error) {
	status, ok := statusOf[hitl.ErrorCode(err)]
	if !ok || status == http.StatusInternalServerError {
		s.log.Error("sign-in through the identity provider", "error", err)
		status = http.StatusInternalServerError
		err = errors.New("internal error")
	}
	v := s.newLoginView("")
	v.Error = "Sign-in refused: " + hitl.ErrorMessage(err)
	if status == http.StatusInternalServerError {
		v.Error = "Sign-in failed: an internal error; try again, and tell an admin if it persists."
	}
	renderLogin(w, status, v)
}

// randomToken returns 32 random bytes, base64url.
func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand panics instead)
	return base64.RawURLEncoding.EncodeToString(b)
}
