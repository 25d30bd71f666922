package oidc

import (
	"fmt"
	"strings"

	coreos "github.com/coreos/go-oidc/v3/oidc"
	"github.com/hitl-sh/hitl"
)

// Identity is the person a verified ID token names.
type Identity struct {
	Issuer  string
	Subject string
	// Email is the person's address; EmailVerified is false when the
	// provider says it did not verify it (a provider that says nothing,
	// as Entra, is trusted).
	Email         string
	EmailVerified bool
	Name          string
	// Username is the preferred_username claim.
	Username string
	// Groups are the groups claim's values that are valid hitl group
	// names; Dropped are the others.
	Groups  []string
	Dropped []string
}

// claims are the ID token claims hitl reads, besides groups.
type claims struct {
	Email         string `json:"email"`
	EmailVerified *bool  `json:"email_verified"`
	Name          string `json:"name"`
	Username      string `json:"preferred_username"`
}

// identity reads the person out of a verified ID token.
func (p *Provider) identity(idt *coreos.IDToken) (*Identity, error) {
	var c claims
	if err := idt.Claims(&c); err != nil {
		return nil, hitl.Errorf(hitl.EUNAUTHORIZED, "the ID token's claims could not be read: %v", err)
	}
	var all map[string]any
	if err := idt.Claims(&all); err != nil {
		return nil, hitl.Errorf(hitl.EUNAUTHORIZED, "the ID token's claims could not be read: %v", err)
	}
	id := &Identity{
		Issuer:        idt.Issuer,
		Subject:       idt.Subject,
		Email:         strings.TrimSpace(c.Email),
		EmailVerified: c.EmailVerified == nil || *c.EmailVerified,
		Name:          c.Name,
		Username:      c.Username,
	}
	if id.Subject == "" {
		return nil, hitl.Errorf(hitl.EUNAUTHORIZED, "the ID token names no subject")
	}
	groups, err := groupsOf(all[p.cfg.GroupsClaim])
	if err != nil {
		return nil, hitl.Errorf(hitl.EUNAUTHORIZED, "the ID token's %q claim: %v", p.cfg.GroupsClaim, err)
	}
	seen := map[string]bool{}
	for _, raw := range groups {
		g := GroupName(raw)
		switch {
		case g == "":
		case seen[g]:
		case hitl.ValidateName("group", g) != nil:
			id.Dropped = append(id.Dropped, raw)
		default:
			id.Groups = append(id.Groups, g)
		}
		seen[g] = true
	}
	return id, nil
}

// GroupName is the hitl group name of a provider's group: a Keycloak path
// loses its leading slash, and path and team separators (/ and :) become
// dots, spaces dashes, so "/eng/ops" is "eng.ops", "my-org:sre" (Dex's
// GitHub teams) "my-org.sre" and "Platform Admins" "Platform-Admins".
func GroupName(g string) string {
	g = strings.TrimPrefix(strings.TrimSpace(g), "/")
	return strings.NewReplacer("/", ".", ":", ".", " ", "-").Replace(g)
}

// groupsOf reads a groups claim: an array of strings, or one string of
// groups separated by commas; absent is none.
func groupsOf(v any) ([]string, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		return strings.Split(v, ","), nil
	case []any:
		out := make([]string, 0, len(v))
		for _, g := range v {
			s, ok := g.(string)
			if !ok {
				return nil, fmt.Errorf("holds %T, want strings", g)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("is %T, want an array of strings", v)
}
