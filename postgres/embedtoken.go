package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/jackc/pgx/v5"
)

const embedTokenCols = `id, user_name, session_ids, prefix, hash, created_by, created_at, expires_at`

// CreateEmbedToken adds t and deletes the embed tokens that expired
// before t.CreatedAt, in one statement.
func (s *Store) CreateEmbedToken(ctx context.Context, t *hitl.EmbedToken) error {
	created := s.stamp(t.CreatedAt)
	err := s.exec(ctx, `WITH expired AS (DELETE FROM embed_tokens WHERE expires_at <= $7)
		INSERT INTO embed_tokens (`+embedTokenCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		t.ID, t.User, groupsArg(t.SessionIDs), t.Prefix, t.Hash, t.CreatedBy, created, truncate(t.ExpiresAt))
	switch sqlState(err) {
	case "":
	case foreignKeyViolation:
		return hitl.Errorf(hitl.ENOTFOUND, "no user %q", t.User)
	case uniqueViolation:
		return hitl.Errorf(hitl.ECONFLICT, "embed token %q exists already", t.ID)
	}
	if err != nil {
		return fmt.Errorf("create embed token: %w", badText(err))
	}
	return nil
}

// EmbedTokenByHash returns the unexpired embed token whose secret hashes
// to hash, and its user.
func (s *Store) EmbedTokenByHash(ctx context.Context, hash []byte, now time.Time) (*hitl.EmbedToken, *hitl.User, error) {
	t := &hitl.EmbedToken{}
	var u *hitl.User
	err := s.with(ctx, func(c *pgx.Conn) error {
		var err error
		u, err = scanUser(c.QueryRow(ctx, `SELECT e.id, e.user_name, e.session_ids, e.prefix, e.hash, e.created_by, e.created_at, e.expires_at,
				u.name, u.email, u.member_groups, u.admin, u.password_hash, u.created_at, u.issuer, u.subject, u.disabled
			FROM embed_tokens e JOIN users u ON u.name = e.user_name
			WHERE e.hash = $1 AND e.expires_at > $2 AND NOT u.disabled`, hash, now),
			&t.ID, &t.User, &t.SessionIDs, &t.Prefix, &t.Hash, &t.CreatedBy, &t.CreatedAt, &t.ExpiresAt)
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, hitl.Errorf(hitl.ENOTFOUND, "no such embed token")
	} else if err != nil {
		return nil, nil, fmt.Errorf("find embed token: %w", err)
	}
	t.CreatedAt, t.ExpiresAt = t.CreatedAt.UTC(), t.ExpiresAt.UTC()
	return t, u, nil
}

// EmbedTokensOf returns the unexpired embed tokens of user (of everyone
// when user is ""), oldest first.
func (s *Store) EmbedTokensOf(ctx context.Context, user string, now time.Time) ([]*hitl.EmbedToken, error) {
	var out []*hitl.EmbedToken
	err := s.with(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, `SELECT `+embedTokenCols+` FROM embed_tokens
			WHERE expires_at > $1 AND ($2 = '' OR user_name = $2) ORDER BY created_at, id`, now, user)
		if err != nil {
			return err
		}
		defer rows.Close()
		out = nil
		for rows.Next() {
			t := &hitl.EmbedToken{}
			if err := rows.Scan(&t.ID, &t.User, &t.SessionIDs, &t.Prefix, &t.Hash, &t.CreatedBy, &t.CreatedAt, &t.ExpiresAt); err != nil {
				return err
			}
			t.CreatedAt, t.ExpiresAt = t.CreatedAt.UTC(), t.ExpiresAt.UTC()
			out = append(out, t)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("list embed tokens: %w", err)
	}
	return out, nil
}

// RevokeEmbedToken deletes the embed token with the ID id.
func (s *Store) RevokeEmbedToken(ctx context.Context, id string) error {
	var n int64
	err := s.with(ctx, func(c *pgx.Conn) error {
		tag, err := c.Exec(ctx, `DELETE FROM embed_tokens WHERE id = $1`, id)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return fmt.Errorf("revoke embed token: %w", badText(err))
	}
	if n == 0 {
		return hitl.Errorf(hitl.ENOTFOUND, "no embed token %q", id)
	}
	return nil
}
