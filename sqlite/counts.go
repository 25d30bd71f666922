package sqlite

import (
	"context"
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
