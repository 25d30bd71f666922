package hitl

import (
	"context"
	"slices"
	"time"
)

// Embed token limits.
const (
	// DefaultEmbedTTL is how long an embed token lasts when its maker
	// names no time.
	DefaultEmbedTTL = time.Hour
	// MaxEmbedTTL bounds an embed token's life: it sits in a browser, so
	// it is never long-lived.
	MaxEmbedTTL = 24 * time.Hour
	// MaxEmbedSessions bounds the sessions one embed token covers.
	MaxEmbedSessions = 20
	// MaxSessionIDLen bounds a session ID an embed token names.
	MaxSessionIDLen = 200
)

// EmbedToken is a short-lived credential for the <hitl-prompt> element on
// another site's page: the site's backend mints it for one person and the
// conversations (session IDs) that person has open, and the element may
// then read and answer only the interactions of those sessions that the
// person may answer. Only a hash of its secret is stored.
type EmbedToken struct {
	ID         string   `json:"id"`
	User       string   `json:"user"`
	SessionIDs []string `json:"session_ids"`
	// Prefix is the start of the secret, enough to recognise it.
	Prefix string `json:"prefix"`
	// Hash is the SHA-256 of the secret.
	Hash      []byte    `json:"-"`
	CreatedBy string    `json:"created_by"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Covers reports whether the token's scope includes session.
func (t *EmbedToken) Covers(session string) bool {
	return session != "" && slices.Contains(t.SessionIDs, session)
}

// ValidateEmbedSessions checks the session IDs an embed token is minted
// for: one to MaxEmbedSessions, none empty or too long.
func ValidateEmbedSessions(ids []string) error {
	if len(ids) == 0 {
		return Errorf(EINVALID, "session_ids must name at least one session")
	}
	if len(ids) > MaxEmbedSessions {
		return Errorf(EINVALID, "session_ids may name at most %d sessions", MaxEmbedSessions)
	}
	for _, id := range ids {
		if id == "" || len(id) > MaxSessionIDLen {
			return Errorf(EINVALID, "a session ID must be 1 to %d characters", MaxSessionIDLen)
		}
	}
	return nil
}

// EmbedTokens keeps embed tokens; the stores that keep Identities keep
// them too.
type EmbedTokens interface {
	// CreateEmbedToken adds t, and deletes the tokens that expired before
	// t.CreatedAt; ENOTFOUND when t.User is no user, ECONFLICT when its
	// ID or hash exists already.
	CreateEmbedToken(ctx context.Context, t *EmbedToken) error
	// EmbedTokenByHash returns the embed token whose secret hashes to
	// hash and its user, or ENOTFOUND when there is none or it expired
	// at now.
	EmbedTokenByHash(ctx context.Context, hash []byte, now time.Time) (*EmbedToken, *User, error)
	// EmbedTokensOf returns the embed tokens of user that have not expired
	// at now (every user's when user is ""), oldest first.
	EmbedTokensOf(ctx context.Context, user string, now time.Time) ([]*EmbedToken, error)
	// RevokeEmbedToken deletes the embed token with the ID id; ENOTFOUND
	// when there is none.
	RevokeEmbedToken(ctx context.Context, id string) error
}
