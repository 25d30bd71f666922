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

// CountPending counts the pending interactions per agent and type, the
// targeted ones per agent, type and targets (from
// interactions_pending_targeted), reads the targets of those whose
// escalation may still widen them and the sequence numbers after after,
// in one repeatable-read transaction: one snapshot of the database. A
// sequence number taken by a transaction that has not committed is not
// seen; its event, once committed, is told to the reader later like any
// other.
func (s *Store) CountPending(ctx context.Context, after int64) (*hitl.PendingCounts, error) {
	var pc *hitl.PendingCounts
	err := s.with(ctx, func(c *pgx.Conn) error {
		pc = &hitl.PendingCounts{}
		tx, err := c.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx) //nolint:errcheck // read only
		if pc.Groups, err = pendingGroups(ctx, tx, `SELECT source_agent, type, NULL::text, count(*)
			FROM interactions WHERE status = 'pending' GROUP BY source_agent, type`); err != nil {
			return err
		}
		if pc.Targeted, err = pendingGroups(ctx, tx, `SELECT source_agent, type, targets, count(*)
			FROM interactions WHERE status = 'pending' AND targets IS NOT NULL GROUP BY source_agent, type, targets`); err != nil {
			return err
		}
		if pc.Widening, err = widening(ctx, tx); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT seq FROM events WHERE seq > $1 ORDER BY seq`, after)
		if err != nil {
			return err
		}
		pc.Seen, err = pgx.CollectRows(rows, pgx.RowTo[int64])
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("count pending interactions: %w", badText(err))
	}
	return pc, nil
}

// pendingGroups reads groups from q, which selects an agent, a type, the
// targets (JSON or NULL) and a count. Groups whose targets are given but
// name no one are left out: they are counted among every pending
// interaction as untargeted.
func pendingGroups(ctx context.Context, tx pgx.Tx, q string) ([]hitl.CountGroup, error) {
	rows, err := tx.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var groups []hitl.CountGroup
	for rows.Next() {
		var (
			g       hitl.CountGroup
			targets []byte
		)
		if err := rows.Scan(&g.Agent, &g.Type, &targets, &g.N); err != nil {
			return nil, err
		}
		if keep, err := g.DecodeGroupTargets(targets); err != nil {
			return nil, err
		} else if keep {
			groups = append(groups, g)
		}
	}
	return groups, rows.Err()
}

// widening reads the targets of the pending targeted interactions whose
// escalation may still add targets (hitl.Interaction.MayWiden).
func widening(ctx context.Context, tx pgx.Tx) (map[string]*hitl.Targets, error) {
	rows, err := tx.Query(ctx, `SELECT id, targets, workflow FROM interactions
		WHERE status = 'pending' AND targets IS NOT NULL AND workflow IS NOT NULL`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]*hitl.Targets{}
	for rows.Next() {
		var (
			id                string
			targets, workflow []byte
		)
		if err := rows.Scan(&id, &targets, &workflow); err != nil {
			return nil, err
		}
		t, err := hitl.WideningTargets(targets, workflow)
		if err != nil {
			return nil, fmt.Errorf("interaction %s: %w", id, err)
		}
		if t != nil {
			out[id] = t
		}
	}
	return out, rows.Err()
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
