package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/jackc/pgx/v5"
)

// CountMatching counts the interactions f selects: in all, per agent (f's
// agents aside), per type (f's types aside), and those due at or before
// soon. It reads them once, grouped by agent and type (for the pending
// ones, from the index interactions_pending_counts), and folds the groups
// with hitl.CountGroups.
func (s *Store) CountMatching(ctx context.Context, f hitl.ListFilter, soon time.Time) (*hitl.InteractionCounts, error) {
	var groups []hitl.CountGroup
	err := s.with(ctx, func(c *pgx.Conn) error {
		w := listWhere(f, false, false)
		q := `SELECT source_agent, type, count(*), count(*) FILTER (WHERE deadline <= ` + w.arg(soon) + `)
			FROM interactions` + w.sql() + ` GROUP BY source_agent, type`
		rows, err := c.Query(ctx, q, w.args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var g hitl.CountGroup
			if err := rows.Scan(&g.Agent, &g.Type, &g.N, &g.Expiring); err != nil {
				return err
			}
			groups = append(groups, g)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("count interactions: %w", badText(err))
	}
	return hitl.CountGroups(groups, f), nil
}

// PendingGroups counts the pending interactions per agent and type, and
// reads the sequence numbers after after, in one repeatable-read
// transaction: one snapshot of the database. A sequence number taken by a
// transaction that has not committed is not seen; its event, once
// committed, is told to the reader later like any other.
func (s *Store) PendingGroups(ctx context.Context, after int64) ([]hitl.CountGroup, []int64, error) {
	var (
		groups []hitl.CountGroup
		seen   []int64
	)
	err := s.with(ctx, func(c *pgx.Conn) error {
		groups, seen = nil, nil
		tx, err := c.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx) //nolint:errcheck // read only
		rows, err := tx.Query(ctx, `SELECT source_agent, type, count(*) FROM interactions WHERE status = 'pending' GROUP BY source_agent, type`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var g hitl.CountGroup
			if err := rows.Scan(&g.Agent, &g.Type, &g.N); err != nil {
				rows.Close()
				return err
			}
			groups = append(groups, g)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, `SELECT seq FROM events WHERE seq > $1 ORDER BY seq`, after)
		if err != nil {
			return err
		}
		seen, err = pgx.CollectRows(rows, pgx.RowTo[int64])
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("count pending interactions: %w", badText(err))
	}
	return groups, seen, nil
}

// CountDue counts the interactions f selects that are due at or before
// soon.
func (s *Store) CountDue(ctx context.Context, f hitl.ListFilter, soon time.Time) (int, error) {
	var n int
	err := s.with(ctx, func(c *pgx.Conn) error {
		q, args := countDueQuery(f, soon)
		return c.QueryRow(ctx, q, args...).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("count due interactions: %w", badText(err))
	}
	return n, nil
}

// countDueQuery returns CountDue's query and its parameters: with the
// pending status, a range of interactions_pending_due (dueKey is at most a
// time only for a question that has a deadline).
func countDueQuery(f hitl.ListFilter, soon time.Time) (string, []any) {
	w := listWhere(f, true, true)
	w.add(dueKey + " <= " + w.arg(soon))
	return `SELECT count(*) FROM interactions` + w.sql(), w.args
}
