package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/jackc/pgx/v5"
)

// SignInUser records a sign-in through an OpenID provider: the user with
// u's issuer and subject takes u's email, groups and admin flag, or a user
// named u.Name is created. Two first sign-ins of one person at once
// create one user: the second finds the first's.
func (s *Store) SignInUser(ctx context.Context, u *hitl.User) (*hitl.User, error) {
	if u.Issuer == "" || u.Subject == "" {
		return nil, hitl.Errorf(hitl.EINVALID, "a provider's user needs an issuer and a subject")
	}
	out, err := s.signInUser(ctx, u)
	if sqlState(err) == uniqueViolation && constraintOf(err) == "users_subject" {
		out, err = s.signInUser(ctx, u)
	}
	switch {
	case sqlState(err) == uniqueViolation:
		return nil, hitl.Errorf(hitl.ECONFLICT, "a user named %q exists already and is not this person of %s", u.Name, u.Issuer)
	case err != nil && hitl.ErrorCode(err) == hitl.EINTERNAL:
		return nil, fmt.Errorf("sign in: %w", badText(err))
	case err != nil:
		return nil, err
	}
	return out, nil
}

// signInUser is one attempt of SignInUser, in one transaction.
func (s *Store) signInUser(ctx context.Context, u *hitl.User) (*hitl.User, error) {
	var out *hitl.User
	err := s.with(ctx, func(c *pgx.Conn) error {
		return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			got, err := scanUser(tx.QueryRow(ctx, `UPDATE users SET email = $1, member_groups = $2, admin = $3
				WHERE issuer = $4 AND subject = $5 AND subject <> '' AND NOT disabled RETURNING `+userCols,
				u.Email, groupsArg(u.Groups), u.Admin, u.Issuer, u.Subject))
			if err == nil {
				out = got
				return nil
			} else if !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
			var name string
			err = tx.QueryRow(ctx, `SELECT name FROM users WHERE issuer = $1 AND subject = $2 AND subject <> ''`, u.Issuer, u.Subject).Scan(&name)
			if err == nil {
				return hitl.Errorf(hitl.EFORBIDDEN, "user %q is disabled; an admin can enable them again", name)
			} else if !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
			out, err = scanUser(tx.QueryRow(ctx, `INSERT INTO users (`+userCols+`) VALUES ($1, $2, $3, $4, '', $5, $6, $7, false) RETURNING `+userCols,
				u.Name, u.Email, groupsArg(u.Groups), u.Admin, s.stamp(u.CreatedAt), u.Issuer, u.Subject))
			return err
		})
	})
	return out, err
}

// SetUserDisabled disables or enables a user; disabling ends their
// sessions, embed tokens and push subscriptions in the same statement.
func (s *Store) SetUserDisabled(ctx context.Context, name string, disabled bool) error {
	if !disabled {
		return s.changeUser(ctx, "enable user", name, `UPDATE users SET disabled = false WHERE name = $1`, name)
	}
	return s.changeUser(ctx, "disable user", name, `WITH ended AS (DELETE FROM sessions WHERE user_name = $1),
		embeds AS (DELETE FROM embed_tokens WHERE user_name = $1),
		unsubscribed AS (DELETE FROM push_subscriptions WHERE user_name = $1)
		UPDATE users SET disabled = true WHERE name = $1`, name)
}

// UseSignInState records the sign-in state hashing to hash as used;
// ECONFLICT when it was used already.
func (s *Store) UseSignInState(ctx context.Context, hash []byte, expires time.Time) error {
	err := s.exec(ctx, `WITH expired AS (DELETE FROM sign_in_states WHERE expires_at <= $3)
		INSERT INTO sign_in_states (hash, expires_at) VALUES ($1, $2)`, hash, truncate(expires), s.stamp(time.Time{}))
	if sqlState(err) == uniqueViolation {
		return hitl.Errorf(hitl.ECONFLICT, "this sign-in was used already")
	} else if err != nil {
		return fmt.Errorf("use sign-in state: %w", badText(err))
	}
	return nil
}
