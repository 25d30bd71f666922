package bench

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"

	"github.com/jackc/pgx/v5"
)

// dbSize is the size of a hitl database: all of it (tables and their
// indexes), and the event log's part.
type dbSize struct {
	Total, Events int64
}

// databaseSize reads the size of the database at db: a SQLite file (its
// pages, from dbstat, which leaves out free pages and the WAL) or a
// postgres:// URL (the relations of the URL's schema).
func databaseSize(ctx context.Context, db string) (dbSize, error) {
	if strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://") {
		return postgresSize(ctx, db)
	}
	return sqliteSize(ctx, db)
}

// sqliteSize sums dbstat's pages by the table they belong to.
func sqliteSize(ctx context.Context, path string) (dbSize, error) {
	if _, err := os.Stat(path); err != nil {
		return dbSize{}, err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		return dbSize{}, err
	}
	defer db.Close()
	var sz dbSize
	err = db.QueryRowContext(ctx, `SELECT COALESCE(SUM(d.pgsize), 0),
		COALESCE(SUM(CASE WHEN m.tbl_name = 'events' THEN d.pgsize END), 0)
		FROM dbstat d LEFT JOIN sqlite_master m ON m.name = d.name`).Scan(&sz.Total, &sz.Events)
	if err != nil {
		return dbSize{}, fmt.Errorf("read dbstat: %w", err)
	}
	return sz, nil
}

// postgresSize sums the relations (with indexes and TOAST) of the URL's
// schema.
func postgresSize(ctx context.Context, url string) (dbSize, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return dbSize{}, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var sz dbSize
	err = conn.QueryRow(ctx, `SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::bigint,
		COALESCE(SUM(CASE WHEN c.relname = 'events' THEN pg_total_relation_size(c.oid) END), 0)::bigint
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind = 'r' AND n.nspname = current_schema()`).Scan(&sz.Total, &sz.Events)
	if err != nil {
		return dbSize{}, fmt.Errorf("read relation sizes: %w", err)
	}
	return sz, nil
}
