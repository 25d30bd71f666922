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
// soon. It reads in one transaction, so the counts agree.
func (s *Store) CountMatching(ctx context.Context, f hitl.ListFilter, soon time.Time) (*hitl.InteractionCounts, error) {
	out := &hitl.InteractionCounts{ByAgent: map[string]int{}, ByType: map[hitl.Type]int{}}
	tx, err := s.r.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("count interactions: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read only

	where, args := listWhere(f, true, true)
	q := `SELECT count(*), coalesce(sum(deadline IS NOT NULL AND deadline <= ?), 0) FROM interactions` + whereSQL(where)
	if err := tx.QueryRowContext(ctx, q, append([]any{soon.UnixMilli()}, args...)...).Scan(&out.Total, &out.Expiring); err != nil {
		return nil, fmt.Errorf("count interactions: %w", err)
	}
	where, args = listWhere(f, false, true)
	if err := groupCount(ctx, tx, "source_agent", where, args, func(k string, n int) { out.ByAgent[k] = n }); err != nil {
		return nil, err
	}
	where, args = listWhere(f, true, false)
	if err := groupCount(ctx, tx, "type", where, args, func(k string, n int) { out.ByType[hitl.Type(k)] = n }); err != nil {
		return nil, err
	}
	return out, nil
}

// groupCount counts the interactions matching where per value of col and
// hands each to add.
func groupCount(ctx context.Context, tx *sql.Tx, col string, where []string, args []any, add func(string, int)) error {
	rows, err := tx.QueryContext(ctx, `SELECT `+col+`, count(*) FROM interactions`+whereSQL(where)+` GROUP BY `+col, args...)
	if err != nil {
		return fmt.Errorf("count interactions by %s: %w", col, err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			return fmt.Errorf("count interactions by %s: %w", col, err)
		}
		add(k, n)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("count interactions by %s: %w", col, err)
	}
	return nil
}
