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

// Group commit timing and size.
const (
	// groupMax bounds the writes one transaction carries.
	groupMax = 64
	// groupTimeout bounds the round trip of a group of two writes or more
	// (a write alone runs with its caller's context); a write's caller
	// stops waiting when its own context ends.
	groupTimeout = 30 * time.Second
)

// errClosed is a write's error after the store has closed.
var errClosed = errors.New("store closed")

// groupCommit runs the store's most frequent writes — a question's
// insert and an answer's compare-and-set, each one statement — from many
// callers together: the writes waiting when a group starts go to the
// database in one round trip (a pipeline of prepared statements) and
// commit in one implicit transaction. A commit costs PostgreSQL far more
// than a statement (the WAL flush, and for a commit that notifies the
// lock every notifying commit in the database takes in turn, held across
// the flush, and a wake-up of every listening connection), so under load
// a group of writes costs about what one did, and at one writer at a time
// nothing changes but a hand-off.
//
// One group is in flight at a time: while it commits, the next one
// gathers. The writes of a group are independent (each is a whole write of
// its own, its row change, event and NOTIFY in one statement), so when any
// of them fails in the database, which rolls the group back, each is run
// again alone, in its own transaction, and gets its own outcome. A write
// whose caller has gone before its group starts is not run.
type groupCommit struct {
	pool   *pgxpool.Pool
	writes chan *groupWrite
	stop   chan struct{} // closed by close
	done   chan struct{} // closed when run has returned
	once   sync.Once
}

// groupWrite is one write of a group: a statement that returns at most one
// row, which scan reads (pgx.ErrNoRows when there is none).
type groupWrite struct {
	ctx  context.Context
	key  string // the row it locks first; a group takes them in order
	sql  string
	args []any
	scan func(pgx.Row) error
	err  chan error
}

// newGroupCommit starts the group commit of the store's pool.
func newGroupCommit(pool *pgxpool.Pool) *groupCommit {
	g := makeGroupCommit(pool)
	go g.run()
	return g
}

// makeGroupCommit makes a group commit that gathers writes until run
// starts.
func makeGroupCommit(pool *pgxpool.Pool) *groupCommit {
	return &groupCommit{pool: pool, writes: make(chan *groupWrite, 4*groupMax), stop: make(chan struct{}), done: make(chan struct{})}
}

// write runs one statement in the next group and returns scan's error,
// or the database's. When ctx ends first it returns ctx's error; the
// write may still commit with its group, as a statement may whose context
// ends while it runs.
func (g *groupCommit) write(ctx context.Context, key, sql string, args []any, scan func(pgx.Row) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w := &groupWrite{ctx: ctx, key: key, sql: sql, args: args, scan: scan, err: make(chan error, 1)}
	select {
	case <-g.stop:
		return errClosed
	default:
	}
	select {
	case g.writes <- w:
	case <-g.stop:
		return errClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-w.err:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-g.done:
		select {
		case err := <-w.err: // in the last group
			return err
		default:
			return errClosed
		}
	}
}

// close ends the group commit once the group in flight has committed;
// writes after it fail.
func (g *groupCommit) close() {
	g.once.Do(func() { close(g.stop) })
	<-g.done
}

// run gathers and commits groups until close.
func (g *groupCommit) run() {
	defer close(g.done)
	group := make([]*groupWrite, 0, groupMax)
	for {
		select {
		case <-g.stop:
			g.fail(errClosed)
			return
		case w := <-g.writes:
			group = append(group[:0], w)
		}
	gather:
		for len(group) < groupMax {
			select {
			case w := <-g.writes:
				group = append(group, w)
			default:
				break gather
			}
		}
		g.commit(group)
		clear(group)
	}
}

// fail ends the writes still queued when the store closes.
func (g *groupCommit) fail(err error) {
	for {
		select {
		case w := <-g.writes:
			w.err <- err
		default:
			return
		}
	}
}

// commit runs a group in one transaction, or each of its writes alone
// when the database refused one of them.
func (g *groupCommit) commit(group []*groupWrite) {
	live := group[:0]
	for _, w := range group {
		if err := w.ctx.Err(); err != nil {
			w.err <- err
			continue
		}
		live = append(live, w)
	}
	switch len(live) {
	case 0:
		return
	case 1:
		live[0].err <- g.alone(live[0])
		return
	}
	// Row locks in one order, so that two replicas' groups never wait for
	// each other in a cycle.
	slices.SortStableFunc(live, func(a, b *groupWrite) int { return cmp.Compare(a.key, b.key) })
	errs, refused := g.together(live)
	for i, w := range live {
		if refused {
			errs[i] = g.alone(w)
		}
		w.err <- errs[i]
	}
}

// together sends the group in one pipeline, which the database runs as
// one implicit transaction, and reads each write's row. refused reports
// that the database failed one of them, so that the transaction rolled
// back and none of them was written.
func (g *groupCommit) together(group []*groupWrite) (errs []error, refused bool) {
	ctx, cancel := context.WithTimeout(context.Background(), groupTimeout)
	defer cancel()
	var b pgx.Batch
	for _, w := range group {
		b.Queue(w.sql, w.args...)
	}
	errs = make([]error, len(group))
	br := g.pool.SendBatch(ctx, &b)
	for i, w := range group {
		errs[i] = w.scan(br.QueryRow())
	}
	closeErr := br.Close()
	for i, err := range errs {
		if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) {
			return errs, true
		}
		if err == nil && closeErr != nil {
			errs[i] = fmt.Errorf("commit: %w", closeErr)
		}
	}
	if pgErr := (*pgconn.PgError)(nil); errors.As(closeErr, &pgErr) {
		return errs, true
	}
	return errs, false
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
