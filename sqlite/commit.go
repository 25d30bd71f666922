package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// maxBatch bounds how many write transactions share one commit.
const maxBatch = 128

// Group commit. Every write is a small transaction, and with
// synchronous=FULL each commit waits for the disk (an fsync of the WAL),
// so one commit per write caps the store at a few thousand writes a
// second however many callers there are. Instead, writes that arrive while
// a commit is under way queue up, and the next commit carries them all:
// one transaction, one fsync, and a write that fails is undone alone (see
// commitBatch). No caller hears of success before the commit that holds
// its write is durable, and the writes of a batch run one after another on
// the one writer connection, so a compare-and-set sees the writes before
// it exactly as if each had committed on its own.
//
// There is no committer goroutine: the first caller to find no commit
// under way leads the next batch, and when it is done hands the lead to
// the oldest write still queued. A lone write commits at once, as before.

// writeReq is one write transaction waiting for a commit.
type writeReq struct {
	ctx  context.Context
	fn   func(ctx context.Context, tx *sql.Tx) error
	err  error
	done chan struct{} // closed once err is final
	lead chan struct{} // closed when this write is to lead the next batch
	// alone commits this write in a transaction of its own, not shared
	// with others (a long one, such as a purge batch, so that the writes
	// behind it wait for it once, rather than share its length).
	alone bool
}

// writeQueue holds the writes waiting for the next commit.
type writeQueue struct {
	mu      sync.Mutex
	queue   []*writeReq
	leading bool  // a batch is being committed
	taken   int64 // writes ever queued
}

// write runs fn in a write transaction on the single writer connection and
// returns once the transaction is durable, or fn's error (nothing of fn's
// is then kept). fn may share its transaction with other writes: it must
// use the tx and ctx it is given (ctx carries the caller's values but not
// its cancellation, which would interrupt the shared transaction), and set
// every result it returns afresh each time it is called.
func (s *Store) write(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return s.enqueue(ctx, fn, false)
}

// writeAlone is write for a long write transaction: it is committed on
// its own, in turn with the other writes, and ctx's cancellation may
// interrupt it.
func (s *Store) writeAlone(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return s.enqueue(ctx, fn, true)
}

// enqueue queues fn for write or writeAlone and returns once it is
// committed or failed.
func (s *Store) enqueue(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error, alone bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r := &writeReq{ctx: ctx, fn: fn, done: make(chan struct{}), lead: make(chan struct{}), alone: alone}
	q := &s.wq
	q.mu.Lock()
	q.queue = append(q.queue, r)
	q.taken++
	lead := !q.leading
	q.leading = true
	q.mu.Unlock()
	if !lead {
		select {
		case <-r.done:
			return r.err
		case <-r.lead:
		}
	}
	s.commitNext()
	<-r.done // the leader is first in the batch it commits
	return r.err
}

// commitNext takes the queued writes (up to maxBatch, and up to a write
// that commits alone, or that write by itself), commits them, and hands
// the lead to the oldest write left, if any.
func (s *Store) commitNext() {
	q := &s.wq
	q.mu.Lock()
	n := min(len(q.queue), maxBatch)
	for i, r := range q.queue[:n] {
		if r.alone {
			n = max(i, 1)
			break
		}
	}
	batch := make([]*writeReq, n)
	copy(batch, q.queue)
	clear(q.queue[:n])
	q.queue = q.queue[n:]
	q.mu.Unlock()

	s.commitBatch(batch)
	for _, r := range batch {
		close(r.done)
	}
	s.wrote()

	q.mu.Lock()
	if len(q.queue) > 0 {
		close(q.queue[0].lead)
	} else {
		q.leading = false
		q.queue = nil // let the backing array go
	}
	q.mu.Unlock()
}

// commitBatch runs every write of batch in one transaction and commits it,
// setting each write's err.
//
// A write that fails must be undone alone. Running each write in its own
// savepoint does that, but costs every write two more statements and a
// copy of each page it changes (the savepoint's journal). Writes rarely
// fail, so the batch first runs without savepoints (commitTogether); only
// when a write fails is it rolled back and run again with them
// (commitApart), which calls the failed write and those before it a second
// time. A write's fn allows that: it sets its results afresh on each call.
func (s *Store) commitBatch(batch []*writeReq) {
	tx, err := s.w.BeginTx(context.Background(), nil)
	if err != nil {
		failAll(batch, fmt.Errorf("begin: %w", err))
		return
	}
	if len(batch) == 1 {
		// Alone: no savepoint needed, and the caller's cancellation may
		// interrupt its own transaction.
		r := batch[0]
		if r.err = r.fn(r.ctx, tx); r.err != nil {
			_ = tx.Rollback()
			return
		}
		if err := tx.Commit(); err != nil {
			r.err = fmt.Errorf("commit: %w", err)
		}
		return
	}
	if s.commitTogether(tx, batch) {
		return
	}
	if tx, err = s.w.BeginTx(context.Background(), nil); err != nil {
		failAll(batch, fmt.Errorf("begin: %w", err))
		return
	}
	s.commitApart(tx, batch)
}

// failAll sets err on every write of batch that has none yet.
func failAll(batch []*writeReq, err error) {
	for _, r := range batch {
		if r.err == nil {
			r.err = err
		}
	}
}

// commitTogether runs the writes of batch one after another in tx and
// commits it. If a write fails it rolls tx back, clears the errors it set
// and reports false: nothing of the batch is kept, and it must run again
// with commitApart.
func (s *Store) commitTogether(tx *sql.Tx, batch []*writeReq) bool {
	ran := 0
	for _, r := range batch {
		if gaveUp(r) {
			continue
		}
		if err := r.fn(context.WithoutCancel(r.ctx), tx); err != nil {
			_ = tx.Rollback()
			for _, r := range batch {
				r.err = nil
			}
			return false
		}
		ran++
	}
	commitRan(tx, batch, ran)
	return true
}

// commitApart runs each write of batch in tx inside its own savepoint, so
// that one that fails is undone alone, and commits the rest.
func (s *Store) commitApart(tx *sql.Tx, batch []*writeReq) {
	ran := 0
	for _, r := range batch {
		if gaveUp(r) {
			continue
		}
		if _, err := tx.Exec(`SAVEPOINT w`); err != nil {
			_ = tx.Rollback()
			failAll(batch, fmt.Errorf("savepoint: %w", err))
			return
		}
		if r.err = r.fn(context.WithoutCancel(r.ctx), tx); r.err != nil {
			// Undo this write alone. If that fails, SQLite has rolled the
			// whole transaction back (disk full, I/O error): nothing of the
			// batch is kept, and every write in it fails.
			if _, err := tx.Exec(`ROLLBACK TO w; RELEASE w`); err != nil {
				_ = tx.Rollback()
				failAll(batch, fmt.Errorf("write batch rolled back: %w", errors.Join(r.err, err)))
				return
			}
			continue
		}
		if _, err := tx.Exec(`RELEASE w`); err != nil {
			_ = tx.Rollback()
			failAll(batch, fmt.Errorf("release savepoint: %w", err))
			return
		}
		ran++
	}
	commitRan(tx, batch, ran)
}

// gaveUp reports whether r's caller gave up before its turn, setting r.err
// to why: nothing of r is written.
func gaveUp(r *writeReq) bool {
	r.err = r.ctx.Err()
	return r.err != nil
}

// commitRan commits tx, which holds ran writes of batch, or rolls it back
// when it holds none.
func commitRan(tx *sql.Tx, batch []*writeReq, ran int) {
	if ran == 0 {
		_ = tx.Rollback()
		return
	}
	if err := tx.Commit(); err != nil {
		failAll(batch, fmt.Errorf("commit: %w", err))
	}
}
