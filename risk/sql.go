package risk

import (
	"regexp"
	"strings"
	"sync"
)

// sqlPatterns find SQL that drops or empties a table, or deletes or
// updates every row.
type sqlPatterns struct {
	drop, truncate, delete, update, where *regexp.Regexp
}

// sqlRE compiles the patterns when first used, not at every start of hitl
// (an agent's command hook starts it for each tool call).
var sqlRE = sync.OnceValue(func() *sqlPatterns {
	return &sqlPatterns{
		drop:     regexp.MustCompile(`(?i)\bdrop\s+(table|database|schema|index|view)\b`),
		truncate: regexp.MustCompile(`(?i)\btruncate\s+(table\s+)?[\w."]+`),
		delete:   regexp.MustCompile(`(?i)\bdelete\s+from\s+[\w."]+`),
		update:   regexp.MustCompile(`(?i)\bupdate\s+[\w."]+\s+set\b`),
		where:    regexp.MustCompile(`(?i)\bwhere\b`),
	}
})

// sqlRisks says what is risky in the SQL that s holds, statement by
// statement: DROP and TRUNCATE always, DELETE and UPDATE without WHERE.
func sqlRisks(s string) []string {
	var why []string
	re := sqlRE()
	for _, stmt := range strings.Split(s, ";") {
		switch {
		case re.drop.MatchString(stmt):
			why = append(why, "drops data (SQL DROP "+strings.ToUpper(re.drop.FindStringSubmatch(stmt)[1])+")")
		case re.truncate.MatchString(stmt):
			why = append(why, "empties a table (SQL TRUNCATE)")
		case re.delete.MatchString(stmt) && !re.where.MatchString(stmt):
			why = append(why, "deletes every row (SQL DELETE without WHERE)")
		case re.update.MatchString(stmt) && !re.where.MatchString(stmt):
			why = append(why, "changes every row (SQL UPDATE without WHERE)")
		}
	}
	return why
}
