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
// soon. It reads in one repeatable-read transaction, so the counts agree.
func (s *Store) CountMatching(ctx context.Context, f hitl.ListFilter, soon time.Time) (*hitl.InteractionCounts, error) {
	out := &hitl.InteractionCounts{ByAgent: map[string]int{}, ByType: map[hitl.Type]int{}}
	err := s.with(ctx, func(c *pgx.Conn) error {
		tx, err := c.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx) //nolint:errcheck // read only
		w := listWhere(f, true, true)
		q := `SELECT count(*), count(*) FILTER (WHERE deadline <= ` + w.arg(soon) + `) FROM interactions` + w.sql()
		if err := tx.QueryRow(ctx, q, w.args...).Scan(&out.Total, &out.Expiring); err != nil {
			return err
		}
		if err := groupCount(ctx, tx, "source_agent", listWhere(f, false, true), func(k string, n int) { out.ByAgent[k] = n }); err != nil {
			return err
		}
		return groupCount(ctx, tx, "type", listWhere(f, true, false), func(k string, n int) { out.ByType[hitl.Type(k)] = n })
	})
	if err != nil {
		return nil, fmt.Errorf("count interactions: %w", badText(err))
	}
	return out, nil
}

// groupCount counts the interactions matching w per value of col and
// hands each to add.
func groupCount(ctx context.Context, tx pgx.Tx, col string, w *conditions, add func(string, int)) error {
	rows, err := tx.Query(ctx, `SELECT `+col+`, count(*) FROM interactions`+w.sql()+` GROUP BY `+col, w.args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			return err
		}
		add(k, n)
	}
	return rows.Err()
}
