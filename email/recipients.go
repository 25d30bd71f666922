package email

import (
	"context"
	"slices"
	"strings"

	"github.com/hitl-sh/hitl"
)

// recipient is one person a mail goes to: an address, and the hitl user
// who answers through its links ("" for an address on the default list
// with no user of its own, who answers as the address).
type recipient struct {
	address string
	user    string
}

// recipients returns who is told of in by mail: the users it targets and
// the members of the groups it targets, by their email addresses; or, when
// it targets no one in particular, the configured default list. Users
// without an address are left out.
func recipients(ctx context.Context, ids hitl.Identities, in *hitl.Interaction, cfg Config) ([]recipient, error) {
	t := in.Targets
	targeted := t != nil && (len(t.Users) > 0 || len(t.Groups) > 0)
	if !targeted && len(cfg.DefaultRecipients) == 0 {
		return nil, nil
	}
	var users []*hitl.User
	if ids != nil {
		var err error
		if users, err = ids.Users(ctx); err != nil {
			return nil, err
		}
		users = hitl.ActiveUsers(users)
	}
	var out []recipient
	seen := map[string]bool{}
	add := func(r recipient) {
		key := strings.ToLower(r.address)
		if r.address != "" && !seen[key] {
			seen[key] = true
			out = append(out, r)
		}
	}
	if !targeted {
		for _, a := range cfg.DefaultRecipients {
			r := recipient{address: a}
			if u := userByEmail(users, a); u != nil {
				r.user = u.Name
			}
			add(r)
		}
		return out, nil
	}
	for _, u := range users {
		if slices.Contains(t.Users, u.Name) || slices.ContainsFunc(t.Groups, func(g string) bool { return slices.Contains(u.Groups, g) }) {
			add(recipient{address: u.Email, user: u.Name})
		}
	}
	return out, nil
}

// userByEmail returns the user with address a, or nil.
func userByEmail(users []*hitl.User, a string) *hitl.User {
	for _, u := range users {
		if u.Email != "" && strings.EqualFold(u.Email, a) {
			return u
		}
	}
	return nil
}

// callerFor returns who answers through a link of n: its user, with their
// groups and role, or its address as a responder. A user removed since the
// mail was sent answers nothing.
func callerFor(ctx context.Context, ids hitl.Identities, n *hitl.Notification) (hitl.Caller, error) {
	if n.Responder == "" {
		return hitl.Caller{Name: n.Recipient, Channel: hitl.ChannelEmail, Role: hitl.RoleResponder}, nil
	}
	if ids == nil {
		return hitl.Caller{Name: n.Responder, Channel: hitl.ChannelEmail, Role: hitl.RoleResponder}, nil
	}
	u, err := ids.User(ctx, n.Responder)
	if hitl.ErrorCode(err) == hitl.ENOTFOUND {
		return hitl.Caller{}, hitl.Errorf(hitl.EFORBIDDEN, "the account %s this link was sent to no longer exists", n.Responder)
	} else if err != nil {
		return hitl.Caller{}, err
	}
	return hitl.Caller{Name: u.Name, Channel: hitl.ChannelEmail, Groups: u.Groups, Role: u.Role()}, nil
}
