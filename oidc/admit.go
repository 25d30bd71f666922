package oidc

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/hitl-sh/hitl"
)

// Admit decides whether id may use hitl, and as whom: the user to sign in
// (see hitl.SignOnUsers), with the person's email, groups, and admin flag
// from the group roles. It refuses, with EFORBIDDEN and a reason the
// person can act on, an email outside the allowed domains (or unverified,
// when domains are set) and a person in no mapped group when there is no
// default role.
func (p *Provider) Admit(id *Identity) (*hitl.User, error) {
	email := id.Email
	if !id.EmailVerified {
		email = ""
	}
	if len(p.cfg.AllowedDomains) > 0 && !p.domainAllowed(email) {
		shown := id.Email
		if shown == "" {
			shown = "no email address"
		} else if !id.EmailVerified {
			shown += " (not verified by the provider)"
		}
		return nil, hitl.Errorf(hitl.EFORBIDDEN, "%s may not sign in to hitl: only people of %s may", shown, strings.Join(p.cfg.AllowedDomains, ", "))
	}
	role := p.role(id.Groups)
	if role == "" {
		return nil, hitl.Errorf(hitl.EFORBIDDEN, "you are in none of the groups allowed to use hitl (%s); ask an admin to add you to one", strings.Join(p.mappedGroups(), ", "))
	}
	groups := id.Groups
	if groups == nil {
		groups = []string{}
	}
	return &hitl.User{
		Name:    userName(id),
		Email:   email,
		Groups:  groups,
		Admin:   role == hitl.RoleAdmin,
		Issuer:  id.Issuer,
		Subject: id.Subject,
	}, nil
}

// domainAllowed reports whether email is in one of the allowed domains.
func (p *Provider) domainAllowed(email string) bool {
	at := strings.LastIndexByte(email, '@')
	if at < 0 {
		return false
	}
	domain := strings.ToLower(email[at+1:])
	for _, d := range p.cfg.AllowedDomains {
		if strings.EqualFold(domain, strings.TrimPrefix(d, "@")) {
			return true
		}
	}
	return false
}

// role returns the role groups give: admin before responder, else the
// default role ("" refuses).
func (p *Provider) role(groups []string) hitl.Role {
	best := p.cfg.DefaultRole
	for _, g := range groups {
		switch p.cfg.GroupRoles[g] {
		case hitl.RoleAdmin:
			return hitl.RoleAdmin
		case hitl.RoleResponder:
			best = hitl.RoleResponder
		}
	}
	return best
}

// mappedGroups lists the groups that give a role, for a refusal.
func (p *Provider) mappedGroups() []string {
	out := make([]string, 0, len(p.cfg.GroupRoles))
	for g := range p.cfg.GroupRoles {
		out = append(out, g)
	}
	if len(out) == 0 {
		return []string{"none are mapped"}
	}
	slices.Sort(out)
	return out
}

// userName is the hitl user name of a person signing in for the first
// time: their email, else their preferred username, when it is a valid
// name; else a name made from their issuer and subject.
func userName(id *Identity) string {
	email := id.Email
	if !id.EmailVerified {
		email = ""
	}
	for _, n := range []string{email, id.Username} {
		if n != "" && hitl.ValidateName("user", n) == nil {
			return n
		}
	}
	sum := sha256.Sum256([]byte(id.Issuer + "\x00" + id.Subject))
	return "oidc-" + hex.EncodeToString(sum[:8])
}
