package migration_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hitl-sh/hitl/internal/migration"
)

func TestLoadInVersionOrder(t *testing.T) {
	fsys := fstest.MapFS{
		"migrations/0010_later.sql": {Data: []byte("CREATE TABLE b (x)")},
		"migrations/0002_next.sql":  {Data: []byte("CREATE TABLE a (x)")},
		"migrations/0001_init.sql":  {Data: []byte("CREATE TABLE t (x)")},
		"migrations/README.md":      {Data: []byte("not a migration")},
	}
	ms, err := migration.Load(fsys, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.Name)
	}
	if want := "0001_init.sql 0002_next.sql 0010_later.sql"; strings.Join(got, " ") != want {
		t.Fatalf("got %v, want %s", got, want)
	}
	if ms[2].Version != 10 || ms[2].SQL != "CREATE TABLE b (x)" {
		t.Errorf("last: %+v, want version 10 with its SQL", ms[2])
	}
}

func TestLoadRefusesBadNames(t *testing.T) {
	for name, files := range map[string]fstest.MapFS{
		"NoNumber":  {"m/init.sql": {}},
		"Zero":      {"m/0000_init.sql": {}},
		"NotNumber": {"m/abc_init.sql": {}},
		"Duplicate": {"m/0001_a.sql": {}, "m/001_b.sql": {}},
	} {
		t.Run(name, func(t *testing.T) {
			if ms, err := migration.Load(files, "m/*.sql"); err == nil {
				t.Errorf("got %v, want an error", ms)
			}
		})
	}
}

func TestCheckVersion(t *testing.T) {
	ms := []migration.Migration{{Version: 1}, {Version: 2}}
	for _, current := range []int{0, 1, 2} {
		if err := migration.CheckVersion(current, ms); err != nil {
			t.Errorf("at version %d: %v", current, err)
		}
	}
	err := migration.CheckVersion(3, ms)
	if err == nil || !strings.Contains(err.Error(), "schema version 3, newer than this build knows (2)") {
		t.Errorf("at version 3: %v, want it refused as newer", err)
	}
}
