package postgres

import (
	"strings"

	"github.com/hitl-sh/hitl"
)

// sqlVisible keeps the interactions an audience may see: untargeted ones
// (no targets, or empty lists), and those whose targets name the user
// ($USER) or one of the groups ($GROUPS, a text[]). targets is JSON text.
const sqlVisible = `(
	coalesce(targets::jsonb -> 'users', '[]') = '[]'::jsonb AND coalesce(targets::jsonb -> 'groups', '[]') = '[]'::jsonb
	OR targets::jsonb -> 'users' ? $USER
	OR targets::jsonb -> 'groups' ?| $GROUPS::text[])`

// visibleClause returns sqlVisible for a, with its parameters added
// through arg.
func visibleClause(a *hitl.Audience, arg func(any) string) string {
	groups := a.Groups
	if groups == nil {
		groups = []string{}
	}
	return strings.NewReplacer("$USER", arg(a.User), "$GROUPS", arg(groups)).Replace(sqlVisible)
}
