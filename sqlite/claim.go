package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/hitl-sh/hitl"
)

// leased describes a table of rows claimed for work under a lease: email
// and Web Push notifications, Slack messages, webhook deliveries. A row
// has work when due_at has come and work holds; claiming it sets claim,
// moves due_at to the lease's end (so that no one else claims it before)
// and counts an attempt.
type leased struct {
	table     string // the table
	key       string // its primary key
	work      string // the condition of a row with work, besides due_at; may take arguments
	claim     string // the SET clause of a claimed row, besides due_at and attempts
	returning string // the columns returned for each claimed row
}

// claimSQL is the claiming UPDATE. Its arguments are the lease's end, now,
// work's arguments and the limit. The single writer makes it a
// compare-and-set that no other claim can interleave with.
func (l leased) claimSQL() string {
	return `UPDATE ` + l.table + `
		SET ` + l.claim + `, due_at = ?, attempts = attempts + 1
		WHERE ` + l.key + ` IN (
			SELECT ` + l.key + ` FROM ` + l.table + `
			WHERE due_at IS NOT NULL AND due_at <= ? AND ` + l.work + `
			ORDER BY due_at, ` + l.key + ` LIMIT ?)
		RETURNING ` + l.returning
}

// dueSQL reads whether any row of l has work due. Its arguments are now
// and work's arguments.
func (l leased) dueSQL() string {
	return `SELECT EXISTS (SELECT 1 FROM ` + l.table + `
		WHERE due_at IS NOT NULL AND due_at <= ? AND ` + l.work + `)`
}

// anyDue reports whether a row of l has work due at now, read on a reader
// so that a worker woken with nothing to do (a question that no one is
// to be told of by its channel) does not take the writer: the claim
// after it runs only when there is work. A row that becomes due after
// this read is the next step's, as its worker is woken by it.
func (s *Store) anyDue(ctx context.Context, l leased, now time.Time, workArgs []any) (bool, error) {
	st, err := s.reader(ctx, l.dueSQL())
	if err != nil {
		return false, err
	}
	var due bool
	err = st.QueryRowContext(ctx, append([]any{now.UnixMilli()}, workArgs...)...).Scan(&due)
	return due, err
}

// claimRows claims up to limit rows of l due at now in tx, with work's
// arguments, and returns them read by scan.
func claimRows[T any](ctx context.Context, s *Store, tx *sql.Tx, l leased, now, leaseUntil time.Time, limit int, workArgs []any, scan func(scanner) (*T, error)) ([]*T, error) {
	if limit <= 0 {
		limit = hitl.MaxListLimit
	}
	st := tx.StmtContext(ctx, s.st.claims[l.table])
	args := append(append([]any{leaseUntil.UnixMilli(), now.UnixMilli()}, workArgs...), limit)
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	var out []*T
	for rows.Next() {
		r, err := scan(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, r)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	return out, nil
}

// claimWithInteractions claims rows as claimRows does and reads each
// one's interaction, in one write transaction: of returns a row's
// interaction ID and where its interaction goes.
func claimWithInteractions[T any](ctx context.Context, s *Store, l leased, now, leaseUntil time.Time, limit int, workArgs []any,
	scan func(scanner) (*T, error), of func(*T) (string, **hitl.Interaction)) ([]*T, error) {
	if due, err := s.anyDue(ctx, l, now, workArgs); err != nil || !due {
		return nil, err
	}
	var out []*T
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		if out, err = claimRows(ctx, s, tx, l, now, leaseUntil, limit, workArgs, scan); err != nil {
			return err
		}
		for _, r := range out {
			id, in := of(r)
			if *in, err = scanInteraction(tx.StmtContext(ctx, s.st.interactionW).QueryRowContext(ctx, id)); err != nil {
				return fmt.Errorf("read interaction %s: %w", id, err)
			}
		}
		return nil
	})
	return out, err
}
