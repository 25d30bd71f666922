// Package migration reads the numbered schema changes that the SQLite and
// PostgreSQL stores embed (migrations/NNNN_description.sql) and checks a
// database's version against them; each store applies them in its own
// dialect and transactions.
package migration

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Migration is one numbered schema change.
type Migration struct {
	Version int    // from the file name's number: positive, unique
	Name    string // the file name, as schema_migrations records it
	SQL     string
}

// Load returns the migrations among the files of fsys that pattern
// matches (such as "migrations/*.sql"), in version order. Each name must
// be NNNN_description.sql, with a positive version that no other has.
func Load(fsys fs.FS, pattern string) ([]Migration, error) {
	names, err := fs.Glob(fsys, pattern)
	if err != nil {
		return nil, err
	}
	var ms []Migration
	seen := map[int]string{}
	for _, name := range names {
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must be NNNN_description.sql", base)
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations %s and %s have the same version", prev, base)
		}
		seen[v] = base
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: base, SQL: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	return ms, nil
}

// CheckVersion returns an error when a database at schema version
// current (the highest recorded in schema_migrations) was migrated by a
// newer build, one that knows migrations beyond ms.
func CheckVersion(current int, ms []Migration) error {
	if n := len(ms); n > 0 && current > ms[n-1].Version {
		return fmt.Errorf("database is at schema version %d, newer than this build knows (%d)", current, ms[n-1].Version)
	}
	return nil
}
