package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/auth"
)

// errBadLogin is the one answer to a wrong user name or password, so a
// caller cannot tell which was wrong.
var errBadLogin = hitl.Errorf(hitl.EUNAUTHORIZED, "invalid username or password")

// maxAuditName bounds the user name kept in the audit and the log.
const maxAuditName = 128

// loginRequest is the body of POST /api/v1/auth/login.
type loginRequest struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// meResponse is who the caller is: GET /api/v1/auth/me and a successful
// login.
type meResponse struct {
	Name      string    `json:"name"`
	Role      hitl.Role `json:"role"`
	Groups    []string  `json:"groups"`
	LocalMode bool      `json:"local_mode"` // no users or tokens: no login needed
	Auth      string    `json:"auth"`       // how: local, token or session
	// UndoSeconds is how long the web inbox holds a decision, with Undo,
	// before it sends it; 0 sends at once.
	UndoSeconds float64 `json:"undo_seconds"`
}

func (s *Server) newMe(c hitl.Caller, kind string) meResponse {
	groups := c.Groups
	if groups == nil {
		groups = []string{}
	}
	return meResponse{Name: c.Name, Role: c.Role, Groups: groups, LocalMode: kind == "local", Auth: kind, UndoSeconds: s.undo.Seconds()}
}

// handleLogin serves POST /api/v1/auth/login: with the right username and
// password, a new session in an HttpOnly cookie, and who the caller now
// is; otherwise 401, or 429 after too many attempts from one address.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) error {
	var req loginRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	u, err := s.login(w, r, req.Username, req.Password)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.newMe(hitl.Caller{Name: u.Name, Role: u.Role(), Groups: u.Groups}, "session"))
	return nil
}

// handleLogout serves POST /api/v1/auth/logout: the session ends and its
// cookie is cleared. Without a session it does nothing, successfully.
func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) error {
	if err := s.logout(w, r); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	return nil
}

// handleMe serves GET /api/v1/auth/me.
func (s *Server) handleMe(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, s.newMe(hitl.CallerFrom(r.Context()), credentialFrom(r.Context()).kind))
	return nil
}

// login checks a username and password and starts a session: the cookie
// is set on w. Attempts are limited per client address; failures are
// audited (never the password) and answered alike whichever part was
// wrong, after the same work.
func (s *Server) login(w http.ResponseWriter, r *http.Request, username, password string) (*hitl.User, error) {
	a := s.auth
	ip := clientIP(r)
	if ok, wait := a.login.allow(ip); !ok {
		s.log.Warn("login refused: too many attempts", "username", auditName(username), "remote_addr", ip)
		return nil, retryLater(w, wait, "too many login attempts from this address")
	}
	if a.ids == nil {
		return nil, hitl.Errorf(hitl.EUNAUTHORIZED, "this server's database has no users")
	}
	if a.noPasswords {
		return nil, hitl.Errorf(hitl.EFORBIDDEN, "signing in with a password is turned off on this server; sign in with %s", a.signOnName())
	}
	u, reason, err := a.checkPassword(r.Context(), username, password)
	if err != nil {
		return nil, err
	}
	if reason != "" {
		name := auditName(username)
		s.log.Warn("login failed", "username", name, "remote_addr", ip, "reason", reason)
		f := &hitl.LoginFailure{At: a.now(), Username: name, RemoteAddr: ip, Reason: reason}
		if err := a.ids.RecordLoginFailure(context.WithoutCancel(r.Context()), f); err != nil {
			s.log.Error("record failed login", "error", err)
		}
		return nil, errBadLogin
	}

	if err := s.startSession(w, r, u); err != nil {
		return nil, fmt.Errorf("login: %w", err)
	}
	s.log.Info("login", "username", u.Name, "remote_addr", ip)
	return u, nil
}

// startSession starts a session of u: the cookie is set on w, and the
// session the request came with, if any, ends.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, u *hitl.User) error {
	a := s.auth
	secret, hash := auth.NewSessionSecret()
	now := a.now()
	sess := &hitl.Session{Hash: hash, User: u.Name, CreatedAt: now, ExpiresAt: now.Add(a.ttl)}
	if err := a.ids.CreateSession(r.Context(), sess); err != nil {
		return err
	}
	if old, err := r.Cookie(sessionCookie); err == nil && old.Value != "" {
		if err := a.ids.DeleteSession(r.Context(), auth.HashSecret(old.Value)); err != nil {
			s.log.Warn("end the previous session", "error", err)
		}
	}
	http.SetCookie(w, &http.Cookie{
		Name:     sessionCookie,
		Value:    secret,
		Path:     "/",
		Expires:  sess.ExpiresAt,
		MaxAge:   int(a.ttl.Seconds()),
		HttpOnly: true,
		Secure:   a.secureCookie || r.TLS != nil,
		SameSite: http.SameSiteLaxMode,
	})
	return nil
}

// checkPassword returns the user when password is theirs, or why not
// ("unknown user", "wrong password"). An unknown user costs the same hash
// as a known one, so timing does not tell which names exist.
func (a *authenticator) checkPassword(ctx context.Context, username, password string) (*hitl.User, string, error) {
	select {
	case a.hashing <- struct{}{}:
		defer func() { <-a.hashing }()
	case <-ctx.Done():
		return nil, "", ctx.Err()
	}
	u, err := a.ids.User(ctx, username)
	if errors.Is(err, hitl.ErrNotFound) || username == "" {
		_, _ = auth.CheckPassword(a.dummyHash(), password)
		return nil, "unknown user", nil
	} else if err != nil {
		return nil, "", fmt.Errorf("login: %w", err)
	}
	ok, err := auth.CheckPassword(u.PasswordHash, password)
	switch {
	case u.Disabled:
		return nil, "disabled user", nil
	case u.PasswordHash == "" && u.Subject != "":
		return nil, "signs in through the identity provider", nil
	case errors.Is(err, auth.ErrBadHash):
		return nil, "unreadable password hash", nil
	case err != nil:
		return nil, "", fmt.Errorf("login: %w", err)
	case !ok:
		return nil, "wrong password", nil
	}
	return u, "", nil
}

// dummyHash is a hash to check unknown users' passwords against.
func (a *authenticator) dummyHash() string {
	if h := a.dummy.Load(); h != nil {
		return *h
	}
	h, err := auth.HashPassword("no user has this password")
	if err != nil {
		return ""
	}
	a.dummy.Store(&h)
	return h
}

// logout ends the request's session, if any, and clears its cookie.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) error {
	ck, err := r.Cookie(sessionCookie)
	if err != nil || ck.Value == "" {
		return nil
	}
	if s.auth.ids != nil {
		if err := s.auth.ids.DeleteSession(r.Context(), auth.HashSecret(ck.Value)); err != nil {
			return fmt.Errorf("logout: %w", err)
		}
	}
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: s.auth.secureCookie || r.TLS != nil, SameSite: http.SameSiteLaxMode,
	})
	return nil
}

// auditName makes a user name from a request fit for the log and the
// audit table: valid UTF-8, no control characters, at most maxAuditName
// bytes.
func auditName(name string) string {
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(name, "\uFFFD"))
	if len(name) > maxAuditName {
		name = strings.ToValidUTF8(name[:maxAuditName], "")
	}
	return name
}
