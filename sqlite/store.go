// Package sqlite is a hitl.Store in one SQLite file, through the pure-Go
// modernc.org/sqlite driver (no cgo).
//
// The file is opened in WAL mode with synchronous=FULL, so a commit is
// durable when it returns. Writes go through a single connection in BEGIN
// IMMEDIATE transactions, so they are serialised in Go rather than by
// SQLite retrying on a busy lock, and writes that arrive together share one
// commit (group commit, see commit.go): one fsync for many callers, each
// told of success only once its write is durable. Reads use a pool of
// read-only connections that WAL lets run alongside the writer.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

var _ hitl.Store = (*Store)(nil)

// Options configures a Store; the zero value (or nil) means defaults.
type Options struct {
	// Logger receives migration and maintenance messages; nil discards them.
	Logger *slog.Logger
	// Now is the clock for times a caller leaves zero; nil means time.Now.
	Now func() time.Time
	// Readers is the size of the read connection pool; 0 means
	// max(4, GOMAXPROCS).
	Readers int
	// BusyTimeout is how long a connection waits for a lock held by another
	// process before failing; 0 means 5 seconds.
	BusyTimeout time.Duration
	// Exclusive makes this store the only exclusive one of its file until
	// Close: Open fails with ErrInUse while another holds it. A server opens
	// its store so, since it relies on being the only process that changes
	// interactions (its waits and streams learn of a change from its own
	// writes). Stores opened without it, to manage users and tokens, may
	// share the file with it. It takes a lock on the file path+".lock"
	// (Unix only).
	Exclusive bool
}

// ErrInUse is returned by Open when another exclusive store holds the file.
var ErrInUse = errors.New("the database is in use by another server")

// Store is a hitl.Store backed by one SQLite database file.
type Store struct {
	path  string
	w     *sql.DB // one connection: every write, in a transaction
	r     *sql.DB // read-only pool; the same as w for ":memory:"
	st    statements
	cache stmtCache     // statements prepared on first use
	wq    writeQueue    // writes waiting for the next group commit
	cp    *checkpointer // background checkpoints; nil for ":memory:"
	lock  *os.File      // holds the Exclusive lock; nil without
	now   func() time.Time
	log   *slog.Logger
}

// Open opens (creating if needed) the database at path, applies any
// pending migrations and prepares the store's statements. The path
// ":memory:" gives a private in-memory database, for tests: it is served
// by the single writer connection and lost on Close.
func Open(path string, opts *Options) (*Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	s := &Store{path: path, now: opts.Now, log: opts.Logger}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	readers := opts.Readers
	if readers <= 0 {
		readers = max(4, runtime.GOMAXPROCS(0))
	}
	busy := opts.BusyTimeout
	if busy <= 0 {
		busy = 5 * time.Second
	}

	memory := path == ":memory:"
	var err error
	if opts.Exclusive && !memory {
		if s.lock, err = lockFile(path + ".lock"); err != nil {
			return nil, fmt.Errorf("open sqlite %s: %w", path, err)
		}
	}
	if !memory {
		if err := s.createPrivate(); err != nil {
			s.Close()
			return nil, fmt.Errorf("open sqlite %s: %w", path, err)
		}
	}
	if s.w, err = sql.Open("sqlite", dsn(path, memory, busy, false)); err != nil {
		s.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	s.w.SetMaxOpenConns(1)
	s.w.SetMaxIdleConns(1)
	s.w.SetConnMaxLifetime(0)
	s.w.SetConnMaxIdleTime(0)
	if err := s.init(readers, memory, busy); err != nil {
		s.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	return s, nil
}

// createPrivate creates the database file, when there is none, readable
// and writable by its owner only (0600): it holds questions, answers
// (one-time codes, say) and credential hashes. SQLite gives its -wal and
// -shm files the database file's mode. An existing file's mode is the
// operator's to choose (a backup user in its group, say) and is left
// alone, with a warning when others may read it.
func (s *Store) createPrivate() error {
	f, err := os.OpenFile(s.path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		return f.Close()
	}
	if !errors.Is(err, fs.ErrExist) {
		return err
	}
	if fi, err := os.Stat(s.path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		s.log.Warn("the database file may be read by others; it holds questions, answers and credential hashes (chmod 600 it)",
			"path", s.path, "mode", fmt.Sprintf("%04o", fi.Mode().Perm()))
	}
	return nil
}

// init migrates the schema, opens the readers and prepares statements.
func (s *Store) init(readers int, memory bool, busy time.Duration) error {
	ctx := context.Background()
	if err := s.w.PingContext(ctx); err != nil {
		return err
	}
	if err := s.migrate(ctx); err != nil {
		return err
	}
	if memory {
		s.r = s.w
	} else {
		var err error
		if s.r, err = sql.Open("sqlite", dsn(s.path, false, busy, true)); err != nil {
			return err
		}
		s.r.SetMaxOpenConns(readers)
		s.r.SetMaxIdleConns(readers)
		s.r.SetConnMaxLifetime(0)
		s.r.SetConnMaxIdleTime(0)
		if err := s.r.PingContext(ctx); err != nil {
			return err
		}
	}
	if err := s.st.prepare(ctx, s.w, s.r); err != nil {
		return err
	}
	if !memory {
		s.startCheckpointer()
	}
	return nil
}

// dsn returns the modernc.org/sqlite data source name for path: WAL,
// durable commits, foreign keys, a busy timeout, and for the writer
// BEGIN IMMEDIATE transactions; readers are query_only.
func dsn(path string, memory bool, busy time.Duration, readOnly bool) string {
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(busy.Milliseconds()))
	q.Set("_foreign_keys", "1")
	q.Set("_synchronous", "FULL")
	if !memory {
		q.Set("_journal_mode", "WAL")
	}
	if readOnly {
		q.Set("_query_only", "1")
	} else {
		q.Set("_txlock", "immediate")
		// A batch in which a write fails runs again with each write in
		// its own savepoint (commit.go). A savepoint's journal of the
		// pages it changes went to a temporary file once it outgrew
		// 64 KiB and stayed there for the rest of the batch: when every
		// batch used savepoints, a commit with 256 agents made about 370
		// pwrite calls, against 60 with the journal in memory. The
		// journal is emptied at each release.
		q.Add("_pragma", "temp_store(memory)")
		if !memory {
			q.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", backstopPages))
		}
	}
	if memory {
		return ":memory:?" + q.Encode()
	}
	// A file: URI, so that '?' and '#' in path must be escaped.
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	return "file:" + esc + "?" + q.Encode()
}

// Ping reports whether both the writer and the readers answer.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.w.PingContext(ctx); err != nil {
		return fmt.Errorf("ping sqlite writer: %w", err)
	}
	if err := s.r.PingContext(ctx); err != nil {
		return fmt.Errorf("ping sqlite readers: %w", err)
	}
	return nil
}

// Close closes the statements and connections. The last connection to
// close checkpoints the WAL into the database file.
func (s *Store) Close() error {
	s.stopCheckpointer()
	errs := []error{s.st.close(), s.cache.close()}
	if s.r != nil && s.r != s.w {
		errs = append(errs, s.r.Close())
	}
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	if s.lock != nil {
		errs = append(errs, s.lock.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close sqlite %s: %w", s.path, err)
	}
	return nil
}
