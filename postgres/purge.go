package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/jackc/pgx/v5"
)

// purgeTables are the tables whose rows belong to an interaction (by an
// interaction_id column) and go with it. A table added for an
// interaction's rows is added here too.
var purgeTables = []string{"slack_actions", "slack_messages", "notifications", "webhook_attempts", "webhook_deliveries", "events"}

// purgeStart is the cursor before every interaction (timestamptz holds
// year 1; no interaction is that old).
var purgeStart = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)

// sqlPurge and sqlPurgeDry are purgeQuery's two statements.
var (
	sqlPurge    = purgeQuery(false)
	sqlPurgeDry = purgeQuery(true)
)

// purgeQuery returns the statement of one purge batch. $1 is the cut-off,
// ($2, $3) the cursor (created_at, id), $4 the batch size.
//
// found is the batch: ended interactions, oldest created first, after the
// cursor, locked FOR UPDATE SKIP LOCKED so that two replicas purging at
// once take different rows (a row another is deleting is skipped, one it
// deleted is gone). doomed is found without the interaction of the newest
// event, which is kept so that LastEventSeq never goes back. Then each
// table's rows of doomed are deleted, and the interactions last: the
// foreign keys are checked at the end of the statement, once all are
// gone. mark raises purge_state to the newest event deleted
// (PurgedThrough); two purges at once take turns on its row. It returns the rows deleted from each table of purgeTables, the
// IDs of the interactions deleted (in creation order), and how many
// interactions were found and the last of them (the next cursor).
//
// The dry run finds the same and counts instead of deleting, without
// locking.
func purgeQuery(dry bool) string {
	lock := `
			FOR UPDATE SKIP LOCKED`
	if dry {
		lock = ""
	}
	q := `WITH found AS (
			SELECT id, created_at FROM interactions
			WHERE created_at < $1 AND (created_at, id) > ($2, $3)
				AND status <> 'pending' AND responded_at < $1
			ORDER BY created_at, id LIMIT $4` + lock + `
		), doomed AS (
			SELECT id, created_at FROM found
			WHERE id IS DISTINCT FROM (SELECT interaction_id FROM events ORDER BY seq DESC LIMIT 1)
		)`
	counts := make([]string, len(purgeTables))
	for i, table := range purgeTables {
		if dry {
			counts[i] = `(SELECT count(*) FROM ` + table + ` WHERE interaction_id IN (SELECT id FROM doomed))`
			continue
		}
		q += fmt.Sprintf(`, d%d AS (
			DELETE FROM %s WHERE interaction_id IN (SELECT id FROM doomed) RETURNING %s
		)`, i, table, returned(table))
		counts[i] = fmt.Sprintf(`(SELECT count(*) FROM d%d)`, i)
		if table == "events" {
			q += fmt.Sprintf(`, mark AS (
			INSERT INTO purge_state (id, events_through)
			SELECT 1, max(seq) FROM d%d HAVING count(*) > 0
			ON CONFLICT (id) DO UPDATE SET events_through = greatest(purge_state.events_through, excluded.events_through)
		)`, i)
		}
	}
	gone := `doomed`
	if !dry {
		q += `, gone AS (
			DELETE FROM interactions WHERE id IN (SELECT id FROM doomed) RETURNING id, created_at
		)`
		gone = `gone`
	}
	return q + `
		SELECT ` + strings.Join(counts, ", ") + `,
			coalesce((SELECT array_agg(id ORDER BY created_at, id) FROM ` + gone + `), '{}'),
			(SELECT count(*) FROM found),
			(SELECT created_at FROM found ORDER BY created_at DESC, id DESC LIMIT 1),
			(SELECT id FROM found ORDER BY created_at DESC, id DESC LIMIT 1)`
}

// returned is what the purge's delete from table returns: the events'
// numbers (mark records the newest), one column of anything else.
func returned(table string) string {
	if table == "events" {
		return "seq"
	}
	return "1"
}

// PurgedThrough returns the highest seq of an event a purge deleted, 0 if
// none (see hitl.Store).
func (s *Store) PurgedThrough(ctx context.Context) (int64, error) {
	var seq int64
	if err := s.queryRow(ctx, `SELECT coalesce(max(events_through), 0) FROM purge_state`, nil, &seq); err != nil {
		return 0, fmt.Errorf("read how far events were purged: %w", err)
	}
	return seq, nil
}

// PurgeEnded deletes one batch of interactions that ended before
// p.EndedBefore, with their events and Slack rows, in one statement (see
// hitl.Store and purgeQuery). Replicas purging at once each delete
// different interactions.
func (s *Store) PurgeEnded(ctx context.Context, p hitl.Purge) (*hitl.Purged, error) {
	if p.EndedBefore.IsZero() {
		return nil, hitl.Errorf(hitl.EINVALID, "purge: the cut-off time is required")
	}
	limit := p.BatchLimit()
	afterAt, afterID := purgeStart, ""
	if p.After != "" {
		var err error
		if afterAt, afterID, err = decodeCursor(p.After); err != nil {
			return nil, err
		}
	}
	q := sqlPurge
	if p.DryRun {
		q = sqlPurgeDry
	}
	counts := make([]int, len(purgeTables))
	var (
		ids    []string
		found  int
		lastAt *time.Time
		lastID *string
	)
	dest := make([]any, 0, len(counts)+4)
	for i := range counts {
		dest = append(dest, &counts[i])
	}
	dest = append(dest, &ids, &found, &lastAt, &lastID)
	err := s.with(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, q, p.EndedBefore, afterAt, afterID, limit).Scan(dest...)
	})
	if err != nil {
		return nil, fmt.Errorf("purge: %w", err)
	}
	out := &hitl.Purged{IDs: ids, Rows: map[string]int{"interactions": len(ids)}}
	for i, table := range purgeTables {
		out.Rows[table] = counts[i]
	}
	if len(out.IDs) == 0 {
		out.IDs = nil
	}
	if found == limit && lastAt != nil && lastID != nil {
		out.Next = encodeCursor(lastAt.UnixMilli(), *lastID)
	}
	return out, nil
}
