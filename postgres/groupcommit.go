package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Group commit size and timing.
const (
	// groupMax bounds the writes one transaction carries.
	groupMax = 64
	// groupTimeout bounds the round trip of a group of two writes or more
	// (a write alone runs with its caller's context).
	groupTimeout = 30 * time.Second
)

// groupCommit runs the store's most frequent writes — a question's
// insert, an answer's compare-and-set and an event appended to a
// question, each one statement — from many callers together: the writes
// that queue while a group commits go to the database as the next group,
// in one round trip (a pipeline of prepared statements), and commit in
// one implicit transaction. A commit costs
// PostgreSQL far more than a statement (the WAL flush, and for a commit
// that notifies, the lock every notifying commit in the database takes in
// turn and holds across its flush, and a wake-up of every listening
// connection), so under load a group of writes costs about what one did.
//
// As in the SQLite store, there is no committer goroutine: the first
// caller to find no group under way leads the next one, and when it is
// done hands the lead to the oldest write still queued. A lone write runs
// at once, on its caller's connection and context, as before. The writes
// of a group are independent (each is a whole write, its row change, event
// and NOTIFY in one statement), so when the database refuses one of them,
// which rolls the group back, each runs again alone and gets its own
// outcome. A write whose caller's context has ended before its group
// starts is not run.
type groupCommit struct {
	pool    *pgxpool.Pool
	mu      sync.Mutex
	queue   []*groupWrite
	leading bool // a group is being committed
}

// groupWrite is one write of a group: a statement that returns at most one
// row, which scan reads (pgx.ErrNoRows when there is none). scan may run
// twice (together, then alone): it sets its results afresh each time.
type groupWrite struct {
	ctx  context.Context
	key  string // the row it locks first; a group takes them in order
	sql  string
	args []any
	scan func(pgx.Row) error
	err  error
	done chan struct{} // closed once err is final
	lead chan struct{} // closed when this write is to lead the next group
}

// write runs one statement in the next group and returns scan's error, or
// the database's, once the group is committed.
func (g *groupCommit) write(ctx context.Context, key, sql string, args []any, scan func(pgx.Row) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w := &groupWrite{ctx: ctx, key: key, sql: sql, args: args, scan: scan, done: make(chan struct{}), lead: make(chan struct{})}
	g.mu.Lock()
	g.queue = append(g.queue, w)
	lead := !g.leading
	g.leading = true
	g.mu.Unlock()
	if !lead {
		select {
		case <-w.done:
			return w.err
		case <-w.lead:
		}
	}
	g.commitNext()
	<-w.done // the leader is first in the group it commits
	return w.err
}

// commitNext takes the queued writes (up to groupMax), commits them, and
// hands the lead to the oldest write left, if any.
func (g *groupCommit) commitNext() {
	g.mu.Lock()
	group := slices.Clone(g.queue[:min(len(g.queue), groupMax)])
	clear(g.queue[:len(group)])
	g.queue = g.queue[len(group):]
	g.mu.Unlock()

	g.commit(group)
	for _, w := range group {
		close(w.done)
	}

	g.mu.Lock()
	if len(g.queue) > 0 {
		close(g.queue[0].lead)
	} else {
		g.leading = false
		g.queue = nil // let the backing array go
	}
	g.mu.Unlock()
}

// commit runs a group in one transaction, or each of its writes alone
// when the database refused one of them, setting each write's err.
func (g *groupCommit) commit(group []*groupWrite) {
	live := make([]*groupWrite, 0, len(group))
	for _, w := range group {
		if w.err = w.ctx.Err(); w.err == nil {
			live = append(live, w)
		}
	}
	switch len(live) {
	case 0:
		return
	case 1:
		live[0].err = g.alone(live[0])
		return
	}
	// Row locks in one order, so that two replicas' groups never wait for
	// each other in a cycle.
	slices.SortStableFunc(live, func(a, b *groupWrite) int { return cmp.Compare(a.key, b.key) })
	if g.together(live) {
		for _, w := range live {
			w.err = g.alone(w)
		}
	}
}

// together sends the group in one pipeline, which the database runs as
// one implicit transaction, and sets each write's err. refused reports
// that the database failed one of them, so that the transaction rolled
// back and none of them was written.
func (g *groupCommit) together(group []*groupWrite) (refused bool) {
	ctx, cancel := context.WithTimeout(context.Background(), groupTimeout)
	defer cancel()
	var b pgx.Batch
	for _, w := range group {
		b.Queue(w.sql, w.args...)
	}
	br := g.pool.SendBatch(ctx, &b)
	for _, w := range group {
		w.err = w.scan(br.QueryRow())
	}
	closeErr := br.Close()
	var pgErr *pgconn.PgError
	for _, w := range group {
		if errors.As(w.err, &pgErr) {
			return true
		}
		if w.err == nil && closeErr != nil {
			w.err = fmt.Errorf("commit: %w", closeErr)
		}
	}
	return errors.As(closeErr, &pgErr)
}

// alone runs one write in a transaction of its own, with its caller's
// context.
func (g *groupCommit) alone(w *groupWrite) error {
	c, err := g.pool.Acquire(w.ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	return w.scan(c.QueryRow(w.ctx, w.sql, w.args...))
}
