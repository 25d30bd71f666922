package bench

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // the same driver the store uses
)

// floorHTTP measures n bare loopback HTTP round trips: a GET on a
// keep-alive connection to a net/http server that writes two bytes.
func floorHTTP(ctx context.Context, n int) (dist, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return dist{}, fmt.Errorf("floor http: %w", err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "2")
		_, _ = io.WriteString(w, "ok")
	})}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()

	a := newAPI(&Server{URL: "http://" + ln.Addr().String()}, 1)
	defer a.close()
	get := func() error {
		status, _, err := a.roundTrip(ctx, "GET", "/", nil)
		if err == nil && status != http.StatusOK {
			err = fmt.Errorf("status %d", status)
		}
		return err
	}
	samples := make([]time.Duration, 0, n)
	for i := range n + n/10 {
		t0 := time.Now()
		if err := get(); err != nil {
			return dist{}, fmt.Errorf("floor http: %w", err)
		}
		if i >= n/10 { // the first tenth warms up
			samples = append(samples, time.Since(t0))
		}
	}
	return summarize(samples), nil
}

// floorCommit measures n bare durable commits: one small INSERT per
// transaction in a new SQLite file in dir, in WAL mode with
// synchronous=FULL, through the same driver the store uses. Each commit
// starts idle after the one before it: back to back with idle 0. On a
// virtual machine a commit after a pause can take twice as long as one
// back to back (the disk and the idle CPUs wake up), and the sequential
// answer → unblock figure answers after such a pause (settle).
func floorCommit(ctx context.Context, dir string, n int, idle time.Duration) (dist, error) {
	db, err := openFloorDB(filepath.Join(dir, fmt.Sprintf("floor-%s.db", idle)))
	if err != nil {
		return dist{}, fmt.Errorf("floor commit: %w", err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
		return dist{}, fmt.Errorf("floor commit: %w", err)
	}
	var mode string
	if err := db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		return dist{}, fmt.Errorf("floor commit: journal mode %q, want wal (%v)", mode, err)
	}
	samples := make([]time.Duration, 0, n)
	for i := range n + n/10 {
		if idle > 0 {
			time.Sleep(idle)
		}
		t0 := time.Now()
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return dist{}, fmt.Errorf("floor commit: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO t (v) VALUES (?)`, "approve build 1234"); err != nil {
			tx.Rollback()
			return dist{}, fmt.Errorf("floor commit: %w", err)
		}
		if err := tx.Commit(); err != nil {
			return dist{}, fmt.Errorf("floor commit: %w", err)
		}
		if i >= n/10 {
			samples = append(samples, time.Since(t0))
		}
	}
	return summarize(samples), nil
}

// openFloorDB opens the SQLite file at path as the floors use it: WAL,
// synchronous=FULL, BEGIN IMMEDIATE, one connection.
func openFloorDB(path string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_journal_mode=WAL&_synchronous=FULL&_txlock=immediate&_busy_timeout=5000")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// floorCommitPostgres measures n bare durable commits on the PostgreSQL
// database at url: one small INSERT per transaction into a scratch table,
// dropped afterwards, with the server's settings (synchronous_commit on
// unless the server says otherwise).
func floorCommitPostgres(ctx context.Context, url string, n int) (dist, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return dist{}, fmt.Errorf("floor commit: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if err := ensureSchema(ctx, conn); err != nil {
		return dist{}, fmt.Errorf("floor commit: %w", err)
	}
	const table = "hitl_bench_floor"
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+table+` (id bigserial PRIMARY KEY, v text NOT NULL)`); err != nil {
		return dist{}, fmt.Errorf("floor commit: create scratch table: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `DROP TABLE IF EXISTS `+table)
	samples := make([]time.Duration, 0, n)
	for i := range n + n/10 {
		t0 := time.Now()
		tx, err := conn.Begin(ctx)
		if err != nil {
			return dist{}, fmt.Errorf("floor commit: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+table+` (v) VALUES ($1)`, "approve build 1234"); err != nil {
			tx.Rollback(ctx)
			return dist{}, fmt.Errorf("floor commit: %w", err)
		}
		if err := tx.Commit(ctx); err != nil {
			return dist{}, fmt.Errorf("floor commit: %w", err)
		}
		if i >= n/10 {
			samples = append(samples, time.Since(t0))
		}
	}
	return summarize(samples), nil
}

// ensureSchema creates the schema the connection's search_path names
// first, when it does not exist yet: the URL's search_path may name a
// schema the hitl store has not created yet, and the floors' scratch
// tables go there.
func ensureSchema(ctx context.Context, conn *pgx.Conn) error {
	var schema *string
	if err := conn.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return err
	}
	if schema != nil {
		return nil
	}
	var path string
	if err := conn.QueryRow(ctx, `SELECT current_setting('search_path')`).Scan(&path); err != nil {
		return err
	}
	first, _, _ := strings.Cut(path, ",")
	first = strings.Trim(strings.TrimSpace(first), `"`)
	if first == "" || first == "$user" {
		return fmt.Errorf("the URL selects no schema to create the scratch table in")
	}
	if _, err := conn.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{first}.Sanitize()); err != nil {
		return fmt.Errorf("create schema %s: %w", first, err)
	}
	return nil
}
