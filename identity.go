package hitl

import (
	"context"
	"strings"
	"time"
)

// User is a person who logs in, with a password or through an OpenID
// provider: a responder, or an admin.
type User struct {
	Name   string   `json:"name"`
	Email  string   `json:"email,omitempty"`
	Groups []string `json:"groups"`
	Admin  bool     `json:"admin"`
	// PasswordHash is the encoded password hash (argon2id); never the
	// password. Empty for a person who signs in through a provider.
	PasswordHash string `json:"-"`
	// Issuer and Subject name the person at the OpenID provider they sign
	// in with (the ID token's iss and sub); empty for password users. They
	// stay the same when the person's email or name changes.
	Issuer  string `json:"issuer,omitempty"`
	Subject string `json:"subject,omitempty"`
	// Disabled users cannot sign in and are reached on no channel.
	Disabled  bool      `json:"disabled,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// Role returns the user's role: admin or responder.
func (u *User) Role() Role {
	if u.Admin {
		return RoleAdmin
	}
	return RoleResponder
}

// Token is an API token: a bearer credential for an agent, a responder
// (such as a bot answering for people) or an admin. Only a hash of its
// secret is stored.
type Token struct {
	ID     string   `json:"id"`
	Name   string   `json:"name"` // the caller's name; several tokens may share it, for rotation
	Role   Role     `json:"role"`
	Groups []string `json:"groups"`
	// Prefix is the start of the secret, enough to recognise it.
	Prefix string `json:"prefix"`
	// Hash is the SHA-256 of the secret.
	Hash      []byte    `json:"-"`
	CreatedAt time.Time `json:"created_at"`
}

// Session is a logged-in browser. The cookie holds a secret; the store
// holds only its hash.
type Session struct {
	Hash      []byte // SHA-256 of the cookie's secret
	User      string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// LoginFailure is one refused login, kept for audit. The password is never
// recorded.
type LoginFailure struct {
	At         time.Time `json:"at"`
	Username   string    `json:"username"`
	RemoteAddr string    `json:"remote_addr"`
	Reason     string    `json:"reason"` // such as "unknown user" or "wrong password"
}

// Identities keeps users, API tokens, sessions and the audit of failed
// logins. A Store that implements it can run with authentication.
type Identities interface {
	// HasIdentities reports whether any user or token exists: until then
	// a server on a loopback address runs without login.
	HasIdentities(ctx context.Context) (bool, error)

	// CreateUser adds u; ECONFLICT when the name is taken. A zero
	// CreatedAt gets the store's clock.
	CreateUser(ctx context.Context, u *User) error
	// User returns the user named name, or ENOTFOUND.
	User(ctx context.Context, name string) (*User, error)
	// Users returns every user, by name.
	Users(ctx context.Context) ([]*User, error)
	// SetPassword replaces a user's password hash and ends the user's
	// sessions; ENOTFOUND when there is no such user.
	SetPassword(ctx context.Context, name, hash string) error
	// DeleteUser removes a user, their sessions and their browsers' push
	// subscriptions (no question is pushed to them any more); ENOTFOUND
	// when there is no such user.
	DeleteUser(ctx context.Context, name string) error

	// CreateToken adds t; ECONFLICT when its ID or hash exists already.
	CreateToken(ctx context.Context, t *Token) error
	// TokenByHash returns the token whose secret hashes to hash, or
	// ENOTFOUND.
	TokenByHash(ctx context.Context, hash []byte) (*Token, error)
	// Tokens returns every token, oldest first.
	Tokens(ctx context.Context) ([]*Token, error)
	// RevokeTokens deletes the token with the ID nameOrID, or else every
	// token named nameOrID, and returns what it deleted; ENOTFOUND when
	// nothing matched.
	RevokeTokens(ctx context.Context, nameOrID string) ([]*Token, error)

	// CreateSession adds s, and deletes sessions that expired before
	// s.CreatedAt.
	CreateSession(ctx context.Context, s *Session) error
	// Session returns the session whose secret hashes to hash and its
	// user, or ENOTFOUND when there is none or it expired at now.
	Session(ctx context.Context, hash []byte, now time.Time) (*Session, *User, error)
	// DeleteSession ends the session whose secret hashes to hash (nothing
	// when there is none).
	DeleteSession(ctx context.Context, hash []byte) error

	// RecordLoginFailure appends f to the audit of failed logins.
	RecordLoginFailure(ctx context.Context, f *LoginFailure) error
	// LoginFailures returns up to limit failed logins, newest first.
	LoginFailures(ctx context.Context, limit int) ([]*LoginFailure, error)

	// Embed tokens: short-lived credentials of one person for the
	// <hitl-prompt> element (embedtoken.go).
	EmbedTokens

	// People who sign in through an OpenID provider, disabling people,
	// and single-use sign-in states (signon.go).
	SignOnUsers
}

// MaxNameLen bounds user, token and group names.
const MaxNameLen = 64

// ValidateName checks a user, token or group name: 1 to 64 letters,
// digits and . _ @ + -, and for users and tokens not the reserved name
// "local".
func ValidateName(what, name string) error {
	if name == "" {
		return Errorf(EINVALID, "%s name is required", what)
	}
	if len(name) > MaxNameLen {
		return Errorf(EINVALID, "%s name is limited to %d characters", what, MaxNameLen)
	}
	if !validNameRunes(name) {
		return Errorf(EINVALID, "%s name %q may only hold letters, digits and . _ @ + -", what, name)
	}
	if what != "group" && name == LocalCaller {
		return Errorf(EINVALID, "%s name %q is reserved for the local mode", what, name)
	}
	return nil
}

// validNameRunes reports whether every rune of name may be in a user,
// token or group name: the ASCII letters and digits and . _ @ + -. So a
// name holds no invisible character and no letter of another script that
// looks like one of these.
func validNameRunes(name string) bool {
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._@+-", r)
		if !ok {
			return false
		}
	}
	return true
}
