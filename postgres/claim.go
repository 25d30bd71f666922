package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/jackc/pgx/v5"
)

// leased describes a table of rows claimed for work under a lease: email
// and Web Push notifications, Slack messages, webhook deliveries. A row
// has work when due_at has come and work holds; claiming it sets claim,
// moves due_at to the lease's end (so that no one else claims it before)
// and counts an attempt. Rows another replica is claiming at the same
// moment are skipped (SKIP LOCKED), not waited for.
type leased struct {
	table     string   // the table, known in claim and returning as r
	key       string   // its primary key
	work      string   // the condition of a row with work, besides due_at; its arguments are $4 on
	claim     string   // the SET clause of a claimed row, besides due_at and attempts
	returning []string // the expressions returned for each claimed row
}

// claimSQL is the claiming UPDATE: $1 is now, $2 the lease's end, $3 the
// limit, then work's arguments. It returns the claimed rows in key order,
// with their interactions' columns after returning when interactions is
// set.
func (l leased) claimSQL(interactions bool) string {
	q := `WITH due AS (
			SELECT ` + l.key + ` FROM ` + l.table + `
			WHERE due_at IS NOT NULL AND due_at <= $1 AND ` + l.work + `
			ORDER BY due_at, ` + l.key + ` LIMIT $3
			FOR UPDATE SKIP LOCKED
		), up AS (
			UPDATE ` + l.table + ` r SET ` + l.claim + `, due_at = $2, attempts = r.attempts + 1
			FROM due WHERE r.` + l.key + ` = due.` + l.key + `
			RETURNING ` + strings.Join(l.returning, ", ") + `
		)`
	if !interactions {
		return q + ` SELECT * FROM up ORDER BY ` + l.key
	}
	return q + ` SELECT up.*, ` + columns("i.") + `
		FROM up JOIN interactions i ON i.id = up.interaction_id
		ORDER BY up.` + l.key
}

// claimRows claims up to limit rows of l due at now, with work's
// arguments, and returns them read by scan.
func claimRows[T any](ctx context.Context, s *Store, l leased, interactions bool, now, leaseUntil time.Time, limit int, workArgs []any, scan func(pgx.Rows) (*T, error)) ([]*T, error) {
	if limit <= 0 {
		limit = hitl.MaxListLimit
	}
	args := append([]any{truncate(now), truncate(leaseUntil), limit}, workArgs...)
	var out []*T
	err := s.with(ctx, func(c *pgx.Conn) error {
		out = nil
		rows, err := c.Query(ctx, l.claimSQL(interactions), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r, err := scan(rows)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	return out, err
}
