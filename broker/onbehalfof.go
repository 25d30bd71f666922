package broker

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hitl-sh/hitl"
)

// resolveOnBehalfOf returns the name of the person a request's
// on_behalf_of names (see hitl.CleanOnBehalfOf): a user, or the token of
// a responder or an admin, found whatever the case of the name and the
// white space around it, spelt as the person's own name is. A name no
// person has, or one that differs only in case from several, is refused
// (EINVALID): the requester's exclusion compares names, so it must be the
// name the person answers with. Without users or tokens (the local mode)
// the cleaned name is kept.
func (b *Broker) resolveOnBehalfOf(ctx context.Context, name string) (string, error) {
	name, err := hitl.CleanOnBehalfOf(name)
	if err != nil || name == "" {
		return name, err
	}
	ids, ok := b.store.(hitl.Identities)
	if !ok {
		return name, nil
	}
	people, err := peopleNames(ctx, ids)
	if err != nil {
		return "", fmt.Errorf("resolve on_behalf_of: %w", err)
	}
	if len(people) == 0 || slices.Contains(people, name) {
		return name, nil
	}
	var alike []string
	for _, p := range people {
		if strings.EqualFold(p, name) {
			alike = append(alike, p)
		}
	}
	switch len(alike) {
	case 0:
		return "", hitl.Errorf(hitl.EINVALID, "on_behalf_of %q names no one: give the name of a user (or of a responder's or admin's token)", name)
	case 1:
		return alike[0], nil
	}
	return "", hitl.Errorf(hitl.EINVALID, "on_behalf_of %q could be any of %s: give the name exactly", name, strings.Join(alike, ", "))
}

// peopleNames returns the names of everyone who may answer questions:
// every user, and the tokens of responders and admins. None means the
// local mode.
func peopleNames(ctx context.Context, ids hitl.Identities) ([]string, error) {
	users, err := ids.Users(ctx)
	if err != nil {
		return nil, err
	}
	tokens, err := ids.Tokens(ctx)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, u := range hitl.ActiveUsers(users) {
		names = append(names, u.Name)
	}
	for _, t := range tokens {
		if (t.Role == hitl.RoleResponder || t.Role == hitl.RoleAdmin) && !slices.Contains(names, t.Name) {
			names = append(names, t.Name)
		}
	}
	return names, nil
}
