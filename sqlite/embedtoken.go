package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hitl-sh/hitl"
	sqlite3 "modernc.org/sqlite/lib"
)

const embedTokenCols = `id, user_name, session_ids, prefix, hash, created_by, created_at, expires_at`

// CreateEmbedToken adds t and deletes the embed tokens that expired
// before t.CreatedAt.
func (s *Store) CreateEmbedToken(ctx context.Context, t *hitl.EmbedToken) error {
	ids, err := json.Marshal(t.SessionIDs)
	if err != nil {
		return fmt.Errorf("create embed token: %w", err)
	}
	created := t.CreatedAt
	if created.IsZero() {
		created = s.now()
	}
	err = s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM embed_tokens WHERE expires_at <= ?`, created.UnixMilli()); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO embed_tokens (`+embedTokenCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			t.ID, t.User, string(ids), t.Prefix, t.Hash, t.CreatedBy, created.UnixMilli(), t.ExpiresAt.UnixMilli())
		return err
	})
	switch {
	case isConstraint(err, sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY):
		return hitl.Errorf(hitl.ENOTFOUND, "no user %q", t.User)
	case isConstraint(err, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY), isConstraint(err, sqlite3.SQLITE_CONSTRAINT_UNIQUE):
		return hitl.Errorf(hitl.ECONFLICT, "embed token %q exists already", t.ID)
	case err != nil:
		return fmt.Errorf("create embed token: %w", err)
	}
	return nil
}

// EmbedTokenByHash returns the unexpired embed token whose secret hashes
// to hash, and its user.
func (s *Store) EmbedTokenByHash(ctx context.Context, hash []byte, now time.Time) (*hitl.EmbedToken, *hitl.User, error) {
	row := s.r.QueryRowContext(ctx, `SELECT `+prefixed("e.", embedTokenCols)+`, `+prefixed("u.", userCols)+`
		FROM embed_tokens e JOIN users u ON u.name = e.user_name
		WHERE e.hash = ? AND e.expires_at > ? AND u.disabled = 0`, hash, now.UnixMilli())
	t := &hitl.EmbedToken{}
	var ids string
	var created, expires int64
	u, err := scanUser(row, &t.ID, &t.User, &ids, &t.Prefix, &t.Hash, &t.CreatedBy, &created, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, hitl.Errorf(hitl.ENOTFOUND, "no such embed token")
	} else if err != nil {
		return nil, nil, fmt.Errorf("find embed token: %w", err)
	}
	if err := finishEmbedToken(t, ids, created, expires); err != nil {
		return nil, nil, err
	}
	return t, u, nil
}

// EmbedTokensOf returns the unexpired embed tokens of user (of everyone
// when user is ""), oldest first.
func (s *Store) EmbedTokensOf(ctx context.Context, user string, now time.Time) ([]*hitl.EmbedToken, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+embedTokenCols+` FROM embed_tokens
		WHERE expires_at > ? AND (? = '' OR user_name = ?) ORDER BY created_at, id`, now.UnixMilli(), user, user)
	if err != nil {
		return nil, fmt.Errorf("list embed tokens: %w", err)
	}
	defer rows.Close()
	var out []*hitl.EmbedToken
	for rows.Next() {
		t := &hitl.EmbedToken{}
		var ids string
		var created, expires int64
		if err := rows.Scan(&t.ID, &t.User, &ids, &t.Prefix, &t.Hash, &t.CreatedBy, &created, &expires); err != nil {
			return nil, fmt.Errorf("list embed tokens: %w", err)
		}
		if err := finishEmbedToken(t, ids, created, expires); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list embed tokens: %w", err)
	}
	return out, nil
}

// RevokeEmbedToken deletes the embed token with the ID id.
func (s *Store) RevokeEmbedToken(ctx context.Context, id string) error {
	var n int64
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM embed_tokens WHERE id = ?`, id)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return fmt.Errorf("revoke embed token: %w", err)
	}
	if n == 0 {
		return hitl.Errorf(hitl.ENOTFOUND, "no embed token %q", id)
	}
	return nil
}

// finishEmbedToken decodes the session IDs and times scanned for t.
func finishEmbedToken(t *hitl.EmbedToken, ids string, created, expires int64) error {
	if err := json.Unmarshal([]byte(ids), &t.SessionIDs); err != nil {
		return fmt.Errorf("embed token %s: decode session IDs: %w", t.ID, err)
	}
	t.CreatedAt = time.UnixMilli(created).UTC()
	t.ExpiresAt = time.UnixMilli(expires).UTC()
	return nil
}
