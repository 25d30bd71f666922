package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
	sqlite3 "modernc.org/sqlite/lib"
)

var _ hitl.Identities = (*Store)(nil)

// maxLoginFailures bounds the audit of failed logins: older rows are
// dropped as new ones arrive.
const maxLoginFailures = 10000

const (
	userCols  = `name, email, member_groups, admin, password_hash, created_at, issuer, subject, disabled`
	tokenCols = `id, name, role, member_groups, prefix, hash, created_at`
)

// The reads of every authenticated request, prepared (statements.go):
// parsing the token read each time was an eighth of the server's CPU with
// 16 agents.
var (
	sqlTokenByHash = `SELECT ` + tokenCols + ` FROM tokens WHERE hash = ?`
	sqlSession     = `SELECT s.hash, s.user_name, s.created_at, s.expires_at, ` + prefixed("u.", userCols) + `
		FROM sessions s JOIN users u ON u.name = s.user_name
		WHERE s.hash = ? AND s.expires_at > ? AND u.disabled = 0`
)

// HasIdentities reports whether any user or token exists.
func (s *Store) HasIdentities(ctx context.Context) (bool, error) {
	var n int
	err := s.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM users) OR EXISTS (SELECT 1 FROM tokens)`).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("look for users and tokens: %w", err)
	}
	return n != 0, nil
}

// CreateUser adds u; ECONFLICT when the name is taken.
func (s *Store) CreateUser(ctx context.Context, u *hitl.User) error {
	groups, err := encodeGroups(u.Groups)
	if err != nil {
		return fmt.Errorf("create user: %w", err)
	}
	created := u.CreatedAt
	if created.IsZero() {
		created = s.now()
	}
	err = s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO users (`+userCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			u.Name, u.Email, groups, u.Admin, u.PasswordHash, created.UnixMilli(), u.Issuer, u.Subject, u.Disabled)
		return err
	})
	if isConstraint(err, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY) {
		return hitl.Errorf(hitl.ECONFLICT, "user %q exists already", u.Name)
	} else if isConstraint(err, sqlite3.SQLITE_CONSTRAINT_UNIQUE) {
		return hitl.Errorf(hitl.ECONFLICT, "a user of %s with the subject %q exists already", u.Issuer, u.Subject)
	} else if err != nil {
		return fmt.Errorf("create user: %w", err)
	}
	return nil
}

// User returns the user named name, or ENOTFOUND.
func (s *Store) User(ctx context.Context, name string) (*hitl.User, error) {
	u, err := scanUser(s.r.QueryRowContext(ctx, `SELECT `+userCols+` FROM users WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, hitl.Errorf(hitl.ENOTFOUND, "no user %q", name)
	} else if err != nil {
		return nil, fmt.Errorf("get user: %w", err)
	}
	return u, nil
}

// Users returns every user, by name.
func (s *Store) Users(ctx context.Context) ([]*hitl.User, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+userCols+` FROM users ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	defer rows.Close()
	var out []*hitl.User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, fmt.Errorf("list users: %w", err)
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return out, nil
}

// SetPassword replaces the password hash of a user and ends their
// sessions.
func (s *Store) SetPassword(ctx context.Context, name, hash string) error {
	return s.changeUser(ctx, "set password", name, func(ctx context.Context, tx *sql.Tx) (sql.Result, error) {
		return tx.ExecContext(ctx, `UPDATE users SET password_hash = ? WHERE name = ?`, hash, name)
	})
}

// DeleteUser removes a user, their sessions and their browsers' push
// subscriptions.
func (s *Store) DeleteUser(ctx context.Context, name string) error {
	return s.changeUser(ctx, "delete user", name, func(ctx context.Context, tx *sql.Tx) (sql.Result, error) {
		if _, err := tx.ExecContext(ctx, `DELETE FROM push_subscriptions WHERE user_name = ?`, name); err != nil {
			return nil, err
		}
		return tx.ExecContext(ctx, `DELETE FROM users WHERE name = ?`, name)
	})
}

// changeUser runs change on the user named name and deletes the user's
// sessions, in one transaction; ENOTFOUND when change matched no row.
func (s *Store) changeUser(ctx context.Context, what, name string, change func(context.Context, *sql.Tx) (sql.Result, error)) error {
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_name = ?`, name); err != nil {
			return err
		}
		res, err := change(ctx, tx)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return hitl.Errorf(hitl.ENOTFOUND, "no user %q", name)
		}
		return nil
	})
	if err != nil && hitl.ErrorCode(err) == hitl.EINTERNAL {
		return fmt.Errorf("%s: %w", what, err)
	}
	return err
}

// CreateToken adds t; ECONFLICT when its ID or hash exists already.
func (s *Store) CreateToken(ctx context.Context, t *hitl.Token) error {
	groups, err := encodeGroups(t.Groups)
	if err != nil {
		return fmt.Errorf("create token: %w", err)
	}
	created := t.CreatedAt
	if created.IsZero() {
		created = s.now()
	}
	err = s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO tokens (`+tokenCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			t.ID, t.Name, string(t.Role), groups, t.Prefix, t.Hash, created.UnixMilli())
		return err
	})
	switch {
	case isConstraint(err, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY), isConstraint(err, sqlite3.SQLITE_CONSTRAINT_UNIQUE):
		return hitl.Errorf(hitl.ECONFLICT, "token %q exists already", t.ID)
	case isConstraint(err, sqlite3.SQLITE_CONSTRAINT_CHECK):
		return hitl.Errorf(hitl.EINVALID, "token role must be agent, responder or admin; got %q", t.Role)
	case err != nil:
		return fmt.Errorf("create token: %w", err)
	}
	return nil
}

// TokenByHash returns the token whose secret hashes to hash, or ENOTFOUND.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (*hitl.Token, error) {
	t, err := scanToken(s.st.tokenByHash.QueryRowContext(ctx, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, hitl.Errorf(hitl.ENOTFOUND, "no such token")
	} else if err != nil {
		return nil, fmt.Errorf("find token: %w", err)
	}
	return t, nil
}

// Tokens returns every token, oldest first.
func (s *Store) Tokens(ctx context.Context) ([]*hitl.Token, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+tokenCols+` FROM tokens ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	list, err := scanTokens(rows)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return list, nil
}

// RevokeTokens deletes the token with ID nameOrID, or else every token
// named nameOrID.
func (s *Store) RevokeTokens(ctx context.Context, nameOrID string) ([]*hitl.Token, error) {
	var out []*hitl.Token
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `DELETE FROM tokens WHERE id = ? RETURNING `+tokenCols, nameOrID)
		if err != nil {
			return err
		}
		if out, err = scanTokens(rows); err != nil || len(out) > 0 {
			return err
		}
		rows, err = tx.QueryContext(ctx, `DELETE FROM tokens WHERE name = ? RETURNING `+tokenCols, nameOrID)
		if err != nil {
			return err
		}
		out, err = scanTokens(rows)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("revoke token: %w", err)
	}
	if len(out) == 0 {
		return nil, hitl.Errorf(hitl.ENOTFOUND, "no token with the ID or name %q", nameOrID)
	}
	return out, nil
}

// CreateSession adds sess and deletes sessions expired before it began.
func (s *Store) CreateSession(ctx context.Context, sess *hitl.Session) error {
	created := sess.CreatedAt
	if created.IsZero() {
		created = s.now()
	}
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE expires_at <= ?`, created.UnixMilli()); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO sessions (hash, user_name, created_at, expires_at) VALUES (?, ?, ?, ?)`,
			sess.Hash, sess.User, created.UnixMilli(), sess.ExpiresAt.UnixMilli())
		return err
	})
	switch {
	case isConstraint(err, sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY):
		return hitl.Errorf(hitl.ENOTFOUND, "no user %q", sess.User)
	case isConstraint(err, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY):
		return hitl.Errorf(hitl.ECONFLICT, "session exists already")
	case err != nil:
		return fmt.Errorf("create session: %w", err)
	}
	return nil
}

// Session returns the live session whose secret hashes to hash, and its
// user.
func (s *Store) Session(ctx context.Context, hash []byte, now time.Time) (*hitl.Session, *hitl.User, error) {
	var sess hitl.Session
	var created, expires int64
	row := s.st.session.QueryRowContext(ctx, hash, now.UnixMilli())
	u, err := scanUser(row, &sess.Hash, &sess.User, &created, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, hitl.Errorf(hitl.ENOTFOUND, "no such session")
	} else if err != nil {
		return nil, nil, fmt.Errorf("find session: %w", err)
	}
	sess.CreatedAt = time.UnixMilli(created).UTC()
	sess.ExpiresAt = time.UnixMilli(expires).UTC()
	return &sess, u, nil
}

// DeleteSession ends the session whose secret hashes to hash.
func (s *Store) DeleteSession(ctx context.Context, hash []byte) error {
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE hash = ?`, hash)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// RecordLoginFailure appends f to the audit, dropping the oldest rows
// beyond maxLoginFailures.
func (s *Store) RecordLoginFailure(ctx context.Context, f *hitl.LoginFailure) error {
	at := f.At
	if at.IsZero() {
		at = s.now()
	}
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO login_failures (at, username, remote_addr, reason) VALUES (?, ?, ?, ?)`,
			at.UnixMilli(), f.Username, f.RemoteAddr, f.Reason)
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM login_failures WHERE id <= ?`, id-maxLoginFailures)
		return err
	})
	if err != nil {
		return fmt.Errorf("record failed login: %w", err)
	}
	return nil
}

// LoginFailures returns up to limit failed logins, newest first.
func (s *Store) LoginFailures(ctx context.Context, limit int) ([]*hitl.LoginFailure, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT at, username, remote_addr, reason FROM login_failures ORDER BY id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("list failed logins: %w", err)
	}
	defer rows.Close()
	var out []*hitl.LoginFailure
	for rows.Next() {
		var f hitl.LoginFailure
		var at int64
		if err := rows.Scan(&at, &f.Username, &f.RemoteAddr, &f.Reason); err != nil {
			return nil, fmt.Errorf("list failed logins: %w", err)
		}
		f.At = time.UnixMilli(at).UTC()
		out = append(out, &f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list failed logins: %w", err)
	}
	return out, nil
}

// scanUser reads the userCols of one row, after the columns scanned into
// before (for a JOIN).
func scanUser(sc scanner, before ...any) (*hitl.User, error) {
	var u hitl.User
	var groups string
	var created int64
	if err := sc.Scan(append(before, &u.Name, &u.Email, &groups, &u.Admin, &u.PasswordHash, &created, &u.Issuer, &u.Subject, &u.Disabled)...); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(groups), &u.Groups); err != nil {
		return nil, fmt.Errorf("user %s: decode groups: %w", u.Name, err)
	}
	u.CreatedAt = time.UnixMilli(created).UTC()
	return &u, nil
}

// scanTokens reads every row of tokenCols and closes rows.
func scanTokens(rows *sql.Rows) ([]*hitl.Token, error) {
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

// scanToken reads the tokenCols of one row.
func scanToken(sc scanner) (*hitl.Token, error) {
	var t hitl.Token
	var groups string
	var created int64
	if err := sc.Scan(&t.ID, &t.Name, &t.Role, &groups, &t.Prefix, &t.Hash, &created); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(groups), &t.Groups); err != nil {
		return nil, fmt.Errorf("token %s: decode groups: %w", t.ID, err)
	}
	t.CreatedAt = time.UnixMilli(created).UTC()
	return &t, nil
}

// encodeGroups returns groups as a JSON array, [] for none.
func encodeGroups(groups []string) (string, error) {
	if groups == nil {
		groups = []string{}
	}
	b, err := json.Marshal(groups)
	if err != nil {
		return "", fmt.Errorf("encode groups: %w", err)
	}
	return string(b), nil
}

// prefixed returns the comma-separated columns cols, each prefixed with p.
func prefixed(p, cols string) string {
	return p + strings.ReplaceAll(cols, ", ", ", "+p)
}
