package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// Listener timing.
const (
	// gapRecheck is how often a gap in the log is looked at again while it
	// is open. A transaction that commits closes its gap with a
	// notification; this is for one that rolled back, which sends none.
	gapRecheck = 20 * time.Millisecond
	// reconnectMin and reconnectMax bound the wait before reconnecting.
	reconnectMin = 50 * time.Millisecond
	reconnectMax = 5 * time.Second
	// listenBatch is how many sequence numbers one check reads.
	listenBatch = 10000
)

var (
	// sqlSeqs lists the committed sequence numbers after $1.
	sqlSeqs = `SELECT seq FROM events WHERE seq > $1 ORDER BY seq LIMIT $2`

	// sqlWriters lists the transactions that may be inserting events now:
	// those holding the lock every INSERT INTO events takes on the table
	// (from before it takes a sequence number until it ends). Virtual
	// transaction IDs are not reused for a long time.
	sqlWriters = `SELECT coalesce(array_agg(virtualtransaction), '{}') FROM pg_locks
		WHERE locktype = 'relation' AND mode = 'RowExclusiveLock'
			AND relation = 'events'::regclass
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`
)

// ListenEvents implements hitl.EventListener over LISTEN/NOTIFY on a
// dedicated connection (application_name "<name> listener", by default
// "hitl listener"). Every write notifies the sequence number of its event
// when it commits; on each notification (or several at once) the listener
// reads which numbers the log now has after the last one it reported.
//
// Sequence numbers are taken in order but committed in any order, and a
// rolled-back write leaves a gap for good. A gap is still open while a
// transaction that was writing events when the gap was first seen is
// running (it may hold the number); the listener reports only up to the
// first open gap, and re-checks open gaps every 20ms. When the connection
// drops, it reconnects with backoff and catches up from the last number it
// reported, so no event is missed. It returns nil when ctx ends.
func (s *Store) ListenEvents(ctx context.Context, after int64, fn func(upTo int64)) error {
	t := &tracker{safe: after, seen: after, fn: fn}
	wait := reconnectMin
	defer s.listenState.Store(listenOff)
	for {
		up, err := s.listenOnce(ctx, t)
		if ctx.Err() != nil {
			return nil
		}
		s.listenState.Store(listenDown)
		if up {
			wait = reconnectMin
		}
		s.log.Warn("event listener disconnected; reconnecting", "error", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, reconnectMax)
	}
}

// listenOnce connects, listens, catches up and follows notifications
// until the connection fails or ctx ends. up reports whether it got as far
// as listening.
func (s *Store) listenOnce(ctx context.Context, t *tracker) (up bool, err error) {
	conn, err := s.dial(ctx)
	if err != nil {
		return false, fmt.Errorf("connect: %w", err)
	}
	defer closeConn(conn)
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{s.channel}.Sanitize()); err != nil {
		return false, fmt.Errorf("listen: %w", err)
	}
	s.listenState.Store(listenUp)
	s.log.Debug("listening for events", "channel", s.channel, "after", t.safe)
	// Whatever committed while not listening.
	if err := t.check(ctx, conn); err != nil {
		return true, err
	}
	for {
		wctx, cancel := ctx, context.CancelFunc(func() {})
		if len(t.gaps) > 0 {
			wctx, cancel = context.WithTimeout(ctx, gapRecheck)
		}
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return true, ctx.Err()
		case err != nil && errors.Is(err, context.DeadlineExceeded) && !conn.IsClosed():
			// Time to look at the open gaps again.
		case err != nil:
			return true, fmt.Errorf("wait for notification: %w", err)
		case t.notified(n.Payload):
			continue
		}
		if err := t.check(ctx, conn); err != nil {
			return true, err
		}
	}
}

// tracker follows which sequence numbers the log has, and reports how far
// it is complete.
type tracker struct {
	safe int64 // reported: every number up to here is committed or gone for good
	seen int64 // the highest committed number read
	gaps []gap // open gaps after safe, in order, within seen
	fn   func(upTo int64)
}

// notified takes a notification's sequence number without reading the
// log when it can, and reports whether it did: a number the last check saw
// needs nothing, and the number right after a complete log is committed
// (a notification is sent at commit), so the log is complete up to it.
// Anything else, or while a gap is open, needs a check.
func (t *tracker) notified(payload string) bool {
	seq, err := strconv.ParseInt(payload, 10, 64)
	switch {
	case err != nil || len(t.gaps) > 0:
		return false
	case seq <= t.seen:
		return true
	case seq == t.safe+1 && t.seen == t.safe:
		t.safe, t.seen = seq, seq
		t.fn(seq)
		return true
	}
	return false
}

// gap is a run of missing sequence numbers and the transactions that were
// writing events when it was first seen: one of them may hold them.
type gap struct {
	from, to int64
	writers  []string
}

// check reads the numbers committed after safe, updates the gaps and
// reports the new safe point.
//
// Why a closed gap is closed for good: a transaction holding a missing
// number took it before the number after the gap, which is committed, so
// it was running (and writing events) when the read that first saw the gap
// ran; the writers read just after that read include it, or it had ended
// and its event shows in the next read anyway. A gap closes only when none
// of its writers is running in a writers read made before the read that
// still finds it missing: any that committed would show there.
func (t *tracker) check(ctx context.Context, c *pgx.Conn) error {
	for {
		var before []string // writers now, before the numbers are read
		if len(t.gaps) > 0 {
			var err error
			if before, err = writers(ctx, c); err != nil {
				return err
			}
		}
		rows, err := c.Query(ctx, sqlSeqs, t.safe, listenBatch)
		if err != nil {
			return fmt.Errorf("read sequence numbers: %w", err)
		}
		seqs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return fmt.Errorf("read sequence numbers: %w", err)
		}
		hi := t.safe // the numbers in (safe, hi] are now known
		if len(seqs) > 0 {
			hi = seqs[len(seqs)-1]
		}
		var (
			gaps  []gap
			after []string // writers now, after the numbers were read
			read  bool
		)
		prev := t.safe
		for _, seq := range append(seqs, hi+1) {
			if seq > prev+1 {
				from, to := prev+1, seq-1
				// Missing numbers seen before: still open, or closed.
				for _, g := range t.gaps {
					lo, up := max(from, g.from), min(to, g.to)
					if lo <= up && running(g.writers, before) {
						gaps = append(gaps, gap{lo, up, g.writers})
					}
				}
				// Missing numbers seen for the first time.
				if lo := max(from, t.seen+1); lo <= to {
					if !read {
						if after, err = writers(ctx, c); err != nil {
							return err
						}
						read = true
					}
					gaps = append(gaps, gap{lo, to, after})
				}
			}
			prev = seq
		}
		for _, g := range t.gaps {
			if g.from > hi {
				gaps = append(gaps, g) // beyond this batch
			}
		}
		t.gaps = gaps
		t.seen = max(t.seen, hi)
		upTo := hi
		if len(gaps) > 0 {
			upTo = min(upTo, gaps[0].from-1)
		}
		if upTo <= t.safe {
			return nil // an open gap holds it back, or nothing is new
		}
		t.safe = upTo
		t.fn(upTo)
		if len(seqs) < listenBatch {
			return nil
		}
	}
}

// writers returns the virtual transaction IDs of the transactions that
// may be inserting events now.
func writers(ctx context.Context, c *pgx.Conn) ([]string, error) {
	var ids []string
	if err := c.QueryRow(ctx, sqlWriters).Scan(&ids); err != nil {
		return nil, fmt.Errorf("read event writers: %w", err)
	}
	return ids, nil
}

// running reports whether any of a gap's writers is among those running.
func running(writers, now []string) bool {
	return slices.ContainsFunc(writers, func(w string) bool { return slices.Contains(now, w) })
}
