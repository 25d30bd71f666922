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
