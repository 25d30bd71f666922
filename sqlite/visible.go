package sqlite

import (
	"encoding/json"

	"github.com/hitl-sh/hitl"
)

// sqlVisible keeps the interactions an audience may see: untargeted ones
// (no targets, or empty lists), and those whose targets name the user
// (first parameter) or one of the groups (second parameter, a JSON array).
const sqlVisible = `(
	coalesce(json_array_length(targets, '$.users'), 0) = 0 AND coalesce(json_array_length(targets, '$.groups'), 0) = 0
	OR EXISTS (SELECT 1 FROM json_each(targets, '$.users') WHERE value = ?)
	OR EXISTS (SELECT 1 FROM json_each(targets, '$.groups') WHERE value IN (SELECT value FROM json_each(?))))`

// visibleArgs returns the parameters of sqlVisible for a.
func visibleArgs(a *hitl.Audience) []any {
	groups := a.Groups
	if groups == nil {
		groups = []string{}
	}
	b, _ := json.Marshal(groups) // a []string always encodes
	return []any{a.User, string(b)}
}
