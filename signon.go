package hitl

import (
	"context"
	"time"
)

// SignOnUsers keeps the people who sign in through an OpenID provider,
// lets an admin disable anyone, and remembers which sign-in attempts were
// used, so that each provider answer counts once.
type SignOnUsers interface {
	// SignInUser records a sign-in through a provider by the person u
	// describes (Issuer, Subject, Email, Groups and Admin set). The user
	// with u's issuer and subject takes u's email, groups and admin flag
	// (a group the provider no longer gives is gone); without one, a user
	// named u.Name is created. It returns the stored user: EFORBIDDEN when
	// that user is disabled, ECONFLICT when u.Name belongs to someone
	// else (a password user, or another person of a provider).
	SignInUser(ctx context.Context, u *User) (*User, error)
	// SetUserDisabled disables or enables the user named name. Disabling
	// ends the user's sessions, embed tokens and browsers' push
	// subscriptions at once; ENOTFOUND when there is no such user.
	SetUserDisabled(ctx context.Context, name string, disabled bool) error
	// UseSignInState records that the sign-in attempt whose state hashes
	// to hash was used, until expires (after which its state is refused
	// anyway); ECONFLICT when it was used already. Expired records are
	// deleted as new ones arrive.
	UseSignInState(ctx context.Context, hash []byte, expires time.Time) error
}

// ActiveUsers returns the users of list who are not disabled: the people
// channels reach and votes count.
func ActiveUsers(list []*User) []*User {
	out := make([]*User, 0, len(list))
	for _, u := range list {
		if !u.Disabled {
			out = append(out, u)
		}
	}
	return out
}
