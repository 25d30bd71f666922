package postgres

import (
	"context"
	"embed"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/hitl-sh/hitl/internal/migration"
	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrations returns the embedded migrations in version order.
func migrations() ([]migration.Migration, error) {
	return migration.Load(migrationFS, "migrations/*.sql")
}

// migrationLock is the advisory lock key that serialises migrations of
// one schema, so replicas starting together apply each migration once.
func migrationLock(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("hitl migrate\x00" + schema))
	return int64(h.Sum64())
}

// migrate creates the schema if one is named, applies every migration not
// yet recorded in schema_migrations (each in its own transaction with its
// record), and sets the NOTIFY channel. It refuses a database migrated by
// a newer hitl.
func (s *Store) migrate(ctx context.Context, schema string) error {
	ms, err := migrations()
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return s.with(ctx, func(c *pgx.Conn) error {
		key := migrationLock(schema)
		if _, err := c.Exec(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
			return fmt.Errorf("migrate: take lock: %w", err)
		}
		defer func() {
			uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if _, err := c.Exec(uctx, `SELECT pg_advisory_unlock($1)`, key); err != nil {
				closeConn(c) // closing the session releases the lock
			}
		}()
		if schema != "" {
			if _, err := c.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{schema}.Sanitize()); err != nil {
				return fmt.Errorf("migrate: create schema %s: %w", schema, err)
			}
		}
		const create = `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    integer     PRIMARY KEY,
			name       text        NOT NULL,
			applied_at timestamptz NOT NULL
		)`
		if _, err := c.Exec(ctx, create); err != nil {
			return fmt.Errorf("migrate: create schema_migrations: %w", err)
		}
		var latest int
		if err := c.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&latest); err != nil {
			return fmt.Errorf("migrate: read version: %w", err)
		}
		if err := migration.CheckVersion(latest, ms); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		for _, m := range ms {
			if m.Version <= latest {
				continue
			}
			if err := s.apply(ctx, c, m); err != nil {
				return fmt.Errorf("migrate: %s: %w", m.Name, err)
			}
		}
		var current string
		if err := c.QueryRow(ctx, `SELECT current_schema()`).Scan(&current); err != nil {
			return fmt.Errorf("migrate: read schema: %w", err)
		}
		s.channel = channelName(current)
		return nil
	})
}

// apply runs one migration and records it, in one transaction.
func (s *Store) apply(ctx context.Context, c *pgx.Conn, m migration.Migration) error {
	err := pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
			m.Version, m.Name, s.now())
		return err
	})
	if err != nil {
		return err
	}
	s.log.Info("applied migration", "version", m.Version, "name", m.Name)
	return nil
}

// channelName is the NOTIFY channel for the events of schema: a
// PostgreSQL identifier, so at most 63 bytes.
func channelName(schema string) string {
	name := "hitl_events:" + schema
	for len(name) > 63 {
		name = name[:len(name)-1]
	}
	return strings.ToValidUTF8(name, "")
}
