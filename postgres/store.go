// Package postgres is a hitl.Store in PostgreSQL, through pgx, for running
// several hitl servers over one database.
//
// Every write is one statement: the row change, its event and a NOTIFY
// carrying the event's sequence number commit together, in one round trip.
// Questions and answers that arrive together commit together too (group
// commit: one pipeline, one transaction), as a commit costs the database
// far more than a statement. Each server listens on a dedicated connection
// (ListenEvents), so an answer taken by one replica wakes the agent waiting
// on another and reaches every replica's live streams. Deadlines are rows,
// claimed with FOR NO KEY UPDATE SKIP LOCKED and moved out of pending by a
// compare-and-set, so each fires once however many replicas watch it.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

var (
	_ hitl.Store         = (*Store)(nil)
	_ hitl.EventListener = (*Store)(nil)
)

// Options configures a Store; the zero value (or nil) means defaults.
type Options struct {
	// Logger receives migration and listener messages; nil discards them.
	Logger *slog.Logger
	// Now is the clock for times a caller leaves zero; nil means time.Now.
	Now func() time.Time
	// Schema is the schema holding hitl's tables, created if missing. ""
	// means the first schema of the connection's search_path (usually
	// public). Tests use a fresh schema each.
	Schema string
	// MaxConns bounds the connection pool (the event listener has one
	// more); 0 means max(4, GOMAXPROCS).
	MaxConns int
}

// Store is a hitl.Store backed by a PostgreSQL database.
type Store struct {
	pool    *pgxpool.Pool
	group   *groupCommit    // questions' inserts and answers' compare-and-sets
	listen  *pgx.ConnConfig // the listener's connection
	channel string          // NOTIFY channel of this schema's events
	now     func() time.Time
	log     *slog.Logger

	// dial opens the listener's connection; tests replace it.
	dial func(ctx context.Context) (*pgx.Conn, error)
	// listenState is listenOff, listenUp or listenDown.
	listenState atomic.Int32
}

// Listener states, for Ping.
const (
	listenOff  = iota // ListenEvents not running
	listenUp          // listening
	listenDown        // reconnecting
)

// Open connects to the database named by dsn (a postgres:// URL or a
// key=value connection string), applies any pending migrations and returns
// the store. Several processes may open one database at once: migrations
// run under an advisory lock.
func Open(ctx context.Context, dsn string, opts *Options) (*Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	app := cfg.RuntimeParams["application_name"]
	if app == "" {
		app = "hitl"
	}
	cfg.RuntimeParams["application_name"] = app
	if opts.Schema != "" {
		cfg.RuntimeParams["search_path"] = pgx.Identifier{opts.Schema}.Sanitize()
	}
	listen := cfg.Copy()
	listen.RuntimeParams["application_name"] = app + " listener"

	conns := opts.MaxConns
	if conns <= 0 {
		conns = max(4, runtime.GOMAXPROCS(0))
	}
	pcfg, err := pgxpool.ParseConfig("")
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	pcfg.ConnConfig = cfg
	pcfg.MaxConns = int32(conns)
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	s := &Store{pool: pool, listen: listen, now: opts.Now, log: opts.Logger}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s.dial = func(ctx context.Context) (*pgx.Conn, error) { return pgx.ConnectConfig(ctx, s.listen) }
	if err := s.migrate(ctx, opts.Schema); err != nil {
		s.pool.Close()
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	s.group = &groupCommit{pool: pool}
	return s, nil
}

// Ping reports whether the database answers and, while ListenEvents runs,
// whether its connection is up (without it this replica would not hear of
// other replicas' events).
func (s *Store) Ping(ctx context.Context) error {
	err := s.with(ctx, func(c *pgx.Conn) error { return c.Ping(ctx) })
	if err != nil {
		return fmt.Errorf("ping postgres: %w", err)
	}
	if s.listenState.Load() == listenDown {
		return errors.New("ping postgres: event listener is reconnecting")
	}
	return nil
}

// Close closes the store's connections. ListenEvents ends with its context,
// not with Close.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// with runs fn on a pooled connection.
func (s *Store) with(ctx context.Context, fn func(c *pgx.Conn) error) error {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	return fn(c.Conn())
}

// queryRow runs a query expected to return at most one row and scans it
// into dest; no row is pgx.ErrNoRows.
func (s *Store) queryRow(ctx context.Context, sql string, args []any, dest ...any) error {
	return s.with(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, sql, args...).Scan(dest...)
	})
}

// sqlState returns the SQLSTATE of a PostgreSQL error, or "".
func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// SQLSTATEs the store turns into application errors.
const (
	uniqueViolation    = "23505"
	badCharacter       = "22021" // character_not_in_repertoire: NUL or invalid UTF-8 in text
	untranslatableChar = "22P05"
)

// badText turns PostgreSQL's refusal of a text value (a NUL byte or invalid
// UTF-8, which the domain keeps out of requests but a Go caller can still
// pass) into EINVALID; other errors are returned as they are.
func badText(err error) error {
	switch sqlState(err) {
	case badCharacter, untranslatableChar:
		return hitl.Errorf(hitl.EINVALID, "text must be valid UTF-8 without NUL bytes")
	}
	return err
}

// closeConn closes a connection that must not be reused (its session holds
// state such as a lock); a pool destroys a closed connection on release.
func closeConn(c *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = c.Close(ctx)
}

// constraintOf returns the name of the constraint a PostgreSQL error
// broke, or "".
func constraintOf(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.ConstraintName
	}
	return ""
}
