package sqlite

import (
	"database/sql/driver"
	"strings"

	"modernc.org/sqlite"
)

// containsFold is the SQL function hitl_contains_fold(text, part): 1 when
// text contains part, ignoring case (Unicode case folding, which SQLite's
// own lower() and LIKE do only for ASCII), else 0.
const containsFold = "hitl_contains_fold"

func init() {
	sqlite.MustRegisterDeterministicScalarFunction(containsFold, 2, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		text, _ := args[0].(string)
		part, _ := args[1].(string)
		if strings.Contains(strings.ToLower(text), strings.ToLower(part)) {
			return int64(1), nil
		}
		return int64(0), nil
	})
}
