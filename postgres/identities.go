package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/jackc/pgx/v5"
)

var _ hitl.Identities = (*Store)(nil)

// maxLoginFailures bounds the audit of failed logins: older rows are
// dropped as new ones arrive.
const maxLoginFailures = 10000

// SQLSTATEs of refused identity rows.
const (
	foreignKeyViolation = "23503"
	checkViolation      = "23514"
)

const (
	userCols  = `name, email, member_groups, admin, password_hash, created_at, issuer, subject, disabled`
	tokenCols = `id, name, role, member_groups, prefix, hash, created_at`
)

// HasIdentities reports whether any user or token exists.
func (s *Store) HasIdentities(ctx context.Context) (bool, error) {
	var ok bool
	err := s.queryRow(ctx, `SELECT EXISTS (SELECT 1 FROM users) OR EXISTS (SELECT 1 FROM tokens)`, nil, &ok)
	if err != nil {
		return false, fmt.Errorf("look for users and tokens: %w", err)
	}
	return ok, nil
}

// CreateUser adds u; ECONFLICT when the name is taken.
func (s *Store) CreateUser(ctx context.Context, u *hitl.User) error {
	err := s.exec(ctx, `INSERT INTO users (`+userCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		u.Name, u.Email, groupsArg(u.Groups), u.Admin, u.PasswordHash, s.stamp(u.CreatedAt), u.Issuer, u.Subject, u.Disabled)
	if sqlState(err) == uniqueViolation && constraintOf(err) == "users_subject" {
		return hitl.Errorf(hitl.ECONFLICT, "a user of %s with the subject %q exists already", u.Issuer, u.Subject)
	} else if sqlState(err) == uniqueViolation {
		return hitl.Errorf(hitl.ECONFLICT, "user %q exists already", u.Name)
	} else if err != nil {
		return fmt.Errorf("create user: %w", badText(err))
	}
	return nil
}

// User returns the user named name, or ENOTFOUND.
func (s *Store) User(ctx context.Context, name string) (*hitl.User, error) {
	var u *hitl.User
	err := s.with(ctx, func(c *pgx.Conn) error {
		var err error
		u, err = scanUser(c.QueryRow(ctx, `SELECT `+userCols+` FROM users WHERE name = $1`, name))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, hitl.Errorf(hitl.ENOTFOUND, "no user %q", name)
	} else if err != nil {
		return nil, fmt.Errorf("get user: %w", badText(err))
	}
	return u, nil
}

// Users returns every user, by name.
func (s *Store) Users(ctx context.Context) ([]*hitl.User, error) {
	var out []*hitl.User
	err := s.with(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, `SELECT `+userCols+` FROM users ORDER BY name`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			u, err := scanUser(rows)
			if err != nil {
				return err
			}
			out = append(out, u)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return out, nil
}

// SetPassword replaces the password hash of a user and ends their
// sessions, in one statement.
func (s *Store) SetPassword(ctx context.Context, name, hash string) error {
	return s.changeUser(ctx, "set password", name, `WITH ended AS (DELETE FROM sessions WHERE user_name = $1)
		UPDATE users SET password_hash = $2 WHERE name = $1`, name, hash)
}

// DeleteUser removes a user and their browsers' push subscriptions;
// their sessions go with them (ON DELETE CASCADE).
func (s *Store) DeleteUser(ctx context.Context, name string) error {
	return s.changeUser(ctx, "delete user", name, `WITH unsubscribed AS (DELETE FROM push_subscriptions WHERE user_name = $1)
		DELETE FROM users WHERE name = $1`, name)
}

// changeUser runs sql, which changes the user named name; ENOTFOUND when
// it matched no row.
func (s *Store) changeUser(ctx context.Context, what, name, sql string, args ...any) error {
	var n int64
	err := s.with(ctx, func(c *pgx.Conn) error {
		tag, err := c.Exec(ctx, sql, args...)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return fmt.Errorf("%s: %w", what, badText(err))
	}
	if n == 0 {
		return hitl.Errorf(hitl.ENOTFOUND, "no user %q", name)
	}
	return nil
}

// CreateToken adds t; ECONFLICT when its ID or hash exists already.
func (s *Store) CreateToken(ctx context.Context, t *hitl.Token) error {
	err := s.exec(ctx, `INSERT INTO tokens (`+tokenCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		t.ID, t.Name, string(t.Role), groupsArg(t.Groups), t.Prefix, t.Hash, s.stamp(t.CreatedAt))
	switch sqlState(err) {
	case "":
	case uniqueViolation:
		return hitl.Errorf(hitl.ECONFLICT, "token %q exists already", t.ID)
	case checkViolation:
		return hitl.Errorf(hitl.EINVALID, "token role must be agent, responder or admin; got %q", t.Role)
	}
	if err != nil {
		return fmt.Errorf("create token: %w", badText(err))
	}
	return nil
}

// TokenByHash returns the token whose secret hashes to hash, or ENOTFOUND.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (*hitl.Token, error) {
	var t *hitl.Token
	err := s.with(ctx, func(c *pgx.Conn) error {
		var err error
		t, err = scanToken(c.QueryRow(ctx, `SELECT `+tokenCols+` FROM tokens WHERE hash = $1`, hash))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, hitl.Errorf(hitl.ENOTFOUND, "no such token")
	} else if err != nil {
		return nil, fmt.Errorf("find token: %w", err)
	}
	return t, nil
}

// Tokens returns every token, oldest first.
func (s *Store) Tokens(ctx context.Context) ([]*hitl.Token, error) {
	var out []*hitl.Token
	err := s.with(ctx, func(c *pgx.Conn) error {
		var err error
		out, err = queryTokens(ctx, c, `SELECT `+tokenCols+` FROM tokens ORDER BY created_at, id`)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return out, nil
}

// RevokeTokens deletes the token with ID nameOrID, or else every token
// named nameOrID, in one transaction.
func (s *Store) RevokeTokens(ctx context.Context, nameOrID string) ([]*hitl.Token, error) {
	var out []*hitl.Token
	err := s.with(ctx, func(c *pgx.Conn) error {
		return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			var err error
			out, err = queryTokens(ctx, tx, `DELETE FROM tokens WHERE id = $1 RETURNING `+tokenCols, nameOrID)
			if err != nil || len(out) > 0 {
				return err
			}
			out, err = queryTokens(ctx, tx, `DELETE FROM tokens WHERE name = $1 RETURNING `+tokenCols, nameOrID)
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("revoke token: %w", badText(err))
	}
	if len(out) == 0 {
		return nil, hitl.Errorf(hitl.ENOTFOUND, "no token with the ID or name %q", nameOrID)
	}
	return out, nil
}

// CreateSession adds sess and deletes sessions expired before it began,
// in one statement.
func (s *Store) CreateSession(ctx context.Context, sess *hitl.Session) error {
	created := s.stamp(sess.CreatedAt)
	err := s.exec(ctx, `WITH expired AS (DELETE FROM sessions WHERE expires_at <= $3)
		INSERT INTO sessions (hash, user_name, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
		sess.Hash, sess.User, created, truncate(sess.ExpiresAt))
	switch sqlState(err) {
	case "":
	case foreignKeyViolation:
		return hitl.Errorf(hitl.ENOTFOUND, "no user %q", sess.User)
	case uniqueViolation:
		return hitl.Errorf(hitl.ECONFLICT, "session exists already")
	}
	if err != nil {
		return fmt.Errorf("create session: %w", badText(err))
	}
	return nil
}

// Session returns the live session whose secret hashes to hash, and its
// user.
func (s *Store) Session(ctx context.Context, hash []byte, now time.Time) (*hitl.Session, *hitl.User, error) {
	var sess hitl.Session
	var u *hitl.User
	err := s.with(ctx, func(c *pgx.Conn) error {
		var err error
		u, err = scanUser(c.QueryRow(ctx, `SELECT s.hash, s.user_name, s.created_at, s.expires_at,
				u.name, u.email, u.member_groups, u.admin, u.password_hash, u.created_at, u.issuer, u.subject, u.disabled
			FROM sessions s JOIN users u ON u.name = s.user_name
			WHERE s.hash = $1 AND s.expires_at > $2 AND NOT u.disabled`, hash, now),
			&sess.Hash, &sess.User, &sess.CreatedAt, &sess.ExpiresAt)
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, hitl.Errorf(hitl.ENOTFOUND, "no such session")
	} else if err != nil {
		return nil, nil, fmt.Errorf("find session: %w", err)
	}
	sess.CreatedAt = sess.CreatedAt.UTC()
	sess.ExpiresAt = sess.ExpiresAt.UTC()
	return &sess, u, nil
}

// DeleteSession ends the session whose secret hashes to hash.
func (s *Store) DeleteSession(ctx context.Context, hash []byte) error {
	if err := s.exec(ctx, `DELETE FROM sessions WHERE hash = $1`, hash); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// RecordLoginFailure appends f to the audit, dropping the oldest rows
// beyond maxLoginFailures, in one statement.
func (s *Store) RecordLoginFailure(ctx context.Context, f *hitl.LoginFailure) error {
	err := s.exec(ctx, `WITH ins AS (
			INSERT INTO login_failures (at, username, remote_addr, reason) VALUES ($1, $2, $3, $4) RETURNING id
		)
		DELETE FROM login_failures WHERE id <= (SELECT id FROM ins) - $5`,
		s.stamp(f.At), f.Username, f.RemoteAddr, f.Reason, maxLoginFailures)
	if err != nil {
		return fmt.Errorf("record failed login: %w", badText(err))
	}
	return nil
}

// LoginFailures returns up to limit failed logins, newest first.
func (s *Store) LoginFailures(ctx context.Context, limit int) ([]*hitl.LoginFailure, error) {
	var out []*hitl.LoginFailure
	err := s.with(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, `SELECT at, username, remote_addr, reason FROM login_failures ORDER BY id DESC LIMIT $1`, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var f hitl.LoginFailure
			if err := rows.Scan(&f.At, &f.Username, &f.RemoteAddr, &f.Reason); err != nil {
				return err
			}
			f.At = f.At.UTC()
			out = append(out, &f)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("list failed logins: %w", err)
	}
	return out, nil
}

// exec runs one statement on a pooled connection.
func (s *Store) exec(ctx context.Context, sql string, args ...any) error {
	return s.with(ctx, func(c *pgx.Conn) error {
		_, err := c.Exec(ctx, sql, args...)
		return err
	})
}

// stamp returns t, or the store's clock when t is zero, to the
// millisecond.
func (s *Store) stamp(t time.Time) time.Time {
	if t.IsZero() {
		t = s.now()
	}
	return truncate(t)
}

// groupsArg returns groups for a text[] column: {} for none.
func groupsArg(groups []string) []string {
	if groups == nil {
		return []string{}
	}
	return groups
}

// querier is a connection or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// queryTokens runs a query returning tokenCols rows.
func queryTokens(ctx context.Context, q querier, sql string, args ...any) ([]*hitl.Token, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*hitl.Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// scanUser reads the userCols of one row, after the columns scanned into
// before (for a JOIN).
func scanUser(row pgx.Row, before ...any) (*hitl.User, error) {
	var u hitl.User
	if err := row.Scan(append(before, &u.Name, &u.Email, &u.Groups, &u.Admin, &u.PasswordHash, &u.CreatedAt, &u.Issuer, &u.Subject, &u.Disabled)...); err != nil {
		return nil, err
	}
	u.CreatedAt = u.CreatedAt.UTC()
	return &u, nil
}

// scanToken reads the tokenCols of one row.
func scanToken(row pgx.Row) (*hitl.Token, error) {
	var t hitl.Token
	var role string
	if err := row.Scan(&t.ID, &t.Name, &role, &t.Groups, &t.Prefix, &t.Hash, &t.CreatedAt); err != nil {
		return nil, err
	}
	t.Role = hitl.Role(role)
	t.CreatedAt = t.CreatedAt.UTC()
	return &t, nil
}
