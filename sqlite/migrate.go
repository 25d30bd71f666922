package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"

	"github.com/hitl-sh/hitl/internal/migration"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrations returns the embedded migrations in version order.
func migrations() ([]migration.Migration, error) {
	return migration.Load(migrationFS, "migrations/*.sql")
}

// migrate applies every migration not yet recorded in schema_migrations,
// each in its own transaction together with its record. It refuses a
// database migrated by a newer version of hitl.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	const create = `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at INTEGER NOT NULL
	) STRICT`
	if _, err := s.w.ExecContext(ctx, create); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	var latest int
	if err := s.w.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&latest); err != nil {
		return fmt.Errorf("migrate: read version: %w", err)
	}
	if err := migration.CheckVersion(latest, ms); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, m := range ms {
		if err := s.apply(ctx, m); err != nil {
			return fmt.Errorf("migrate: %s: %w", m.Name, err)
		}
	}
	return nil
}

// apply runs one migration unless it is recorded already. The check is
// inside the write transaction, so two processes opening one file at once
// apply each migration once.
func (s *Store) apply(ctx context.Context, m migration.Migration) error {
	applied := false
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, m.Version).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
			m.Version, m.Name, s.now().UnixMilli()); err != nil {
			return err
		}
		applied = true
		return nil
	})
	if err != nil {
		return err
	}
	if applied {
		s.log.Info("applied migration", "version", m.Version, "name", m.Name, "path", s.path)
	}
	return nil
}
