package bench

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"time"

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

	a := newAPI("http://"+ln.Addr().String(), 1)
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
// synchronous=FULL, through the same driver the store uses.
func floorCommit(ctx context.Context, dir string, n int) (dist, error) {
	path := filepath.Join(dir, "floor.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_journal_mode=WAL&_synchronous=FULL&_txlock=immediate&_busy_timeout=5000")
	if err != nil {
		return dist{}, fmt.Errorf("floor commit: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
		return dist{}, fmt.Errorf("floor commit: %w", err)
	}
	var mode string
	if err := db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		return dist{}, fmt.Errorf("floor commit: journal mode %q, want wal (%v)", mode, err)
	}
	samples := make([]time.Duration, 0, n)
	for i := range n + n/10 {
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
