package risk

import (
	"regexp"
	"strings"
)

// SQL that drops or empties a table, or deletes or updates every row.
var (
	sqlDrop     = regexp.MustCompile(`(?i)\bdrop\s+(table|database|schema|index|view)\b`)
	sqlTruncate = regexp.MustCompile(`(?i)\btruncate\s+(table\s+)?[\w."]+`)
	sqlDelete   = regexp.MustCompile(`(?i)\bdelete\s+from\s+[\w."]+`)
	sqlUpdate   = regexp.MustCompile(`(?i)\bupdate\s+[\w."]+\s+set\b`)
	sqlWhere    = regexp.MustCompile(`(?i)\bwhere\b`)
)

// sqlRisks says what is risky in the SQL that s holds, statement by
// statement: DROP and TRUNCATE always, DELETE and UPDATE without WHERE.
func sqlRisks(s string) []string {
	var why []string
	for _, stmt := range strings.Split(s, ";") {
		switch {
		case sqlDrop.MatchString(stmt):
			why = append(why, "drops data (SQL DROP "+strings.ToUpper(sqlDrop.FindStringSubmatch(stmt)[1])+")")
		case sqlTruncate.MatchString(stmt):
			why = append(why, "empties a table (SQL TRUNCATE)")
		case sqlDelete.MatchString(stmt) && !sqlWhere.MatchString(stmt):
			why = append(why, "deletes every row (SQL DELETE without WHERE)")
		case sqlUpdate.MatchString(stmt) && !sqlWhere.MatchString(stmt):
			why = append(why, "changes every row (SQL UPDATE without WHERE)")
		}
	}
	return why
}
