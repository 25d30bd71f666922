package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// stmtCache holds statements prepared on their first use, for the fixed
// queries of the channels' workers, which run after every question and
// answer: SQLite parses a query each time it is prepared, which costs more
// than running a short one. Only queries from a fixed set may be cached
// (never one with values written into its text), so the cache stays small.
// It serves the read pool only: the writer's one connection is held by
// the transaction that would prepare on it (see statements.claims).
type stmtCache struct {
	mu     sync.Mutex
	m      map[stmtKey]*sql.Stmt
	closed bool
}

// stmtKey is a query on one of the store's pools.
type stmtKey struct {
	db    *sql.DB
	query string
}

// get returns query prepared on db, preparing it on first use (outside
// the lock: preparing may wait for a connection).
func (c *stmtCache) get(ctx context.Context, db *sql.DB, query string) (*sql.Stmt, error) {
	k := stmtKey{db, query}
	c.mu.Lock()
	st, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return st, nil
	}
	st, err := db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch had, ok := c.m[k]; {
	case c.closed:
		st.Close()
		return nil, errors.New("sqlite: store closed")
	case ok: // prepared meanwhile by another caller
		st.Close()
		return had, nil
	}
	if c.m == nil {
		c.m = map[stmtKey]*sql.Stmt{}
	}
	c.m[k] = st
	return st, nil
}

// close closes every cached statement; get fails after it.
func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, st := range c.m {
		errs = append(errs, st.Close())
	}
	c.m, c.closed = nil, true
	return errors.Join(errs...)
}

// reader returns query prepared on the read pool.
func (s *Store) reader(ctx context.Context, query string) (*sql.Stmt, error) {
	return s.cache.get(ctx, s.r, query)
}
