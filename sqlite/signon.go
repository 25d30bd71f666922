package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/hitl-sh/hitl"
	sqlite3 "modernc.org/sqlite/lib"
)

// SignInUser records a sign-in through an OpenID provider: the user with
// u's issuer and subject takes u's email, groups and admin flag, or a user
// named u.Name is created.
func (s *Store) SignInUser(ctx context.Context, u *hitl.User) (*hitl.User, error) {
	if u.Issuer == "" || u.Subject == "" {
		return nil, hitl.Errorf(hitl.EINVALID, "a provider's user needs an issuer and a subject")
	}
	groups, err := encodeGroups(u.Groups)
	if err != nil {
		return nil, fmt.Errorf("sign in: %w", err)
	}
	var out *hitl.User
	err = s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		out = nil
		got, err := scanUser(tx.QueryRowContext(ctx, `UPDATE users SET email = ?, member_groups = ?, admin = ?
			WHERE issuer = ? AND subject = ? AND subject <> '' AND disabled = 0 RETURNING `+userCols,
			u.Email, groups, u.Admin, u.Issuer, u.Subject))
		if err == nil {
			out = got
			return nil
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		var name string
		err = tx.QueryRowContext(ctx, `SELECT name FROM users WHERE issuer = ? AND subject = ? AND subject <> ''`, u.Issuer, u.Subject).Scan(&name)
		if err == nil {
			return hitl.Errorf(hitl.EFORBIDDEN, "user %q is disabled; an admin can enable them again", name)
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		created := u.CreatedAt
		if created.IsZero() {
			created = s.now()
		}
		out, err = scanUser(tx.QueryRowContext(ctx, `INSERT INTO users (`+userCols+`) VALUES (?, ?, ?, ?, '', ?, ?, ?, 0) RETURNING `+userCols,
			u.Name, u.Email, groups, u.Admin, created.UnixMilli(), u.Issuer, u.Subject))
		return err
	})
	switch {
	case isConstraint(err, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY):
		return nil, hitl.Errorf(hitl.ECONFLICT, "a user named %q exists already and is not this person of %s", u.Name, u.Issuer)
	case err != nil && hitl.ErrorCode(err) == hitl.EINTERNAL:
		return nil, fmt.Errorf("sign in: %w", err)
	case err != nil:
		return nil, err
	}
	return out, nil
}

// SetUserDisabled disables or enables a user; disabling ends their
// sessions, embed tokens and push subscriptions in the same transaction.
func (s *Store) SetUserDisabled(ctx context.Context, name string, disabled bool) error {
	return s.changeUser(ctx, "disable user", name, func(ctx context.Context, tx *sql.Tx) (sql.Result, error) {
		if disabled {
			for _, q := range []string{`DELETE FROM embed_tokens WHERE user_name = ?`, `DELETE FROM push_subscriptions WHERE user_name = ?`} {
				if _, err := tx.ExecContext(ctx, q, name); err != nil {
					return nil, err
				}
			}
		}
		return tx.ExecContext(ctx, `UPDATE users SET disabled = ? WHERE name = ?`, disabled, name)
	})
}

// UseSignInState records the sign-in state hashing to hash as used;
// ECONFLICT when it was used already.
func (s *Store) UseSignInState(ctx context.Context, hash []byte, expires time.Time) error {
	now := s.now()
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM sign_in_states WHERE expires_at <= ?`, now.UnixMilli()); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO sign_in_states (hash, expires_at) VALUES (?, ?)`, hash, expires.UnixMilli())
		return err
	})
	if isConstraint(err, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY) {
		return hitl.Errorf(hitl.ECONFLICT, "this sign-in was used already")
	} else if err != nil {
		return fmt.Errorf("use sign-in state: %w", err)
	}
	return nil
}
