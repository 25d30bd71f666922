package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/hitl-sh/hitl"
)

// CountMatching counts the interactions f selects: in all, per agent (f's
// agents aside), per type (f's types aside), and those due at or before
// soon. It reads them once, grouped by agent and type (for the pending
// ones, from the index interactions_pending_counts alone), and folds the
// groups with hitl.CountGroups.
func (s *Store) CountMatching(ctx context.Context, f hitl.ListFilter, soon time.Time) (*hitl.InteractionCounts, error) {
	where, args := listWhere(f, false, false)
	from := ` FROM interactions`
	if f.Status == hitl.StatusPending {
		// The partial index needs the status as a literal (listWhere puts
		// the status first).
		from = ` FROM interactions INDEXED BY interactions_pending_counts`
		where[0], args = `status = 'pending'`, args[1:]
	}
	q := `SELECT source_agent, type, count(*), coalesce(sum(deadline IS NOT NULL AND deadline <= ?), 0)` +
		from + whereSQL(where) + ` GROUP BY source_agent, type`
	rows, err := s.r.QueryContext(ctx, q, append([]any{soon.UnixMilli()}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("count interactions: %w", err)
	}
	defer rows.Close()
	var groups []hitl.CountGroup
	for rows.Next() {
		var g hitl.CountGroup
		if err := rows.Scan(&g.Agent, &g.Type, &g.N, &g.Expiring); err != nil {
			return nil, fmt.Errorf("count interactions: %w", err)
		}
		groups = append(groups, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count interactions: %w", err)
	}
	return hitl.CountGroups(groups, f), nil
}

// CountPending counts the pending interactions per agent and type from
// interactions_pending_counts and the targeted ones per agent, type and
// targets from interactions_pending_targeted, reads the targets of those
// whose escalation may still widen them, and reads the sequence numbers
// after after, in one read transaction: one snapshot of the database.
func (s *Store) CountPending(ctx context.Context, after int64) (*hitl.PendingCounts, error) {
	tx, err := s.r.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("count pending interactions: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read only
	pc := &hitl.PendingCounts{}
	if pc.Groups, err = pendingGroups(ctx, tx, `SELECT source_agent, type, NULL, count(*)
		FROM interactions INDEXED BY interactions_pending_counts WHERE status = 'pending' GROUP BY source_agent, type`); err != nil {
		return nil, fmt.Errorf("count pending interactions: %w", err)
	}
	if pc.Targeted, err = pendingGroups(ctx, tx, `SELECT source_agent, type, targets, count(*)
		FROM interactions INDEXED BY interactions_pending_targeted WHERE status = 'pending' AND targets IS NOT NULL
		GROUP BY source_agent, type, targets`); err != nil {
		return nil, fmt.Errorf("count pending interactions: %w", err)
	}
	if pc.Widening, err = widening(ctx, tx); err != nil {
		return nil, fmt.Errorf("count pending interactions: %w", err)
	}
	if pc.Seen, err = seqsAfter(ctx, tx, after); err != nil {
		return nil, fmt.Errorf("count pending interactions: %w", err)
	}
	return pc, nil
}

// pendingGroups reads groups from q, which selects an agent, a type, the
// targets (JSON or NULL) and a count. Groups whose targets are given but
// name no one are left out: they are counted among every pending
// interaction as untargeted.
func pendingGroups(ctx context.Context, tx *sql.Tx, q string) ([]hitl.CountGroup, error) {
	rows, err := tx.QueryContext(ctx, q)
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
func widening(ctx context.Context, tx *sql.Tx) (map[string]*hitl.Targets, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, targets, workflow FROM interactions INDEXED BY interactions_pending_targeted
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

// seqsAfter returns the sequence numbers of the events after after.
func seqsAfter(ctx context.Context, tx *sql.Tx, after int64) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT seq FROM events WHERE seq > ? ORDER BY seq`, after)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var seqs []int64
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			return nil, err
		}
		seqs = append(seqs, seq)
	}
	return seqs, rows.Err()
}

// CountDue counts the interactions f selects that are due at or before
// soon: for the pending ones, a range of interactions_pending_due up to
// soon (dueKey is at most soon only for a question with a deadline).
func (s *Store) CountDue(ctx context.Context, f hitl.ListFilter, soon time.Time) (int, error) {
	where, args := listWhere(f, true, true)
	from := ` FROM interactions`
	if f.Status == hitl.StatusPending {
		from = ` FROM interactions INDEXED BY interactions_pending_due`
		where[0], args = `status = 'pending'`, args[1:]
	}
	where, args = append(where, dueKey+" <= ?"), append(args, soon.UnixMilli())
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*)`+from+whereSQL(where), args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count due interactions: %w", err)
	}
	return n, nil
}
