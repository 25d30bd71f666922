package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/hitl-sh/hitl"
)

// purgeTables are the tables whose rows belong to an interaction (by an
// interaction_id column) and go with it, deleted in this order before the
// interaction itself. A table added for an interaction's rows is added
// here too.
var purgeTables = []string{"slack_actions", "slack_messages", "notifications", "webhook_attempts", "webhook_deliveries", "events"}

// sqlPurgeCandidates finds a batch of ended interactions, oldest created
// first, after a cursor: those created before the cut-off (?1) that ended
// before it, after (created_at, id) = (?2, ?3), at most ?4. The creation
// index serves it, so that no index on the end time weighs on every
// answer; the cursor keeps a purge from reading again what it kept.
const sqlPurgeCandidates = `SELECT id, created_at FROM interactions INDEXED BY interactions_created
	WHERE created_at < ?1 AND (created_at, id) > (?2, ?3)
		AND status <> 'pending' AND responded_at < ?1
	ORDER BY created_at, id LIMIT ?4`

// sqlNewestEventOwner is the interaction of the newest event, which a
// purge keeps: the next sequence number is max(seq) + 1 (no
// AUTOINCREMENT, see 0004), so deleting the newest event would hand its
// number out again.
const sqlNewestEventOwner = `SELECT interaction_id FROM events ORDER BY seq DESC LIMIT 1`

// PurgeEnded deletes one batch of interactions that ended before
// p.EndedBefore, with their events and Slack rows (see hitl.Store). The
// batch is found on a reader, then deleted in one write transaction of its
// own, so the writes queued behind it wait for one short batch, and none
// shares its transaction. An ended interaction never changes again, so
// what the reader found still holds; another purge may have deleted some
// of it in between, and those are not reported twice.
func (s *Store) PurgeEnded(ctx context.Context, p hitl.Purge) (*hitl.Purged, error) {
	if p.EndedBefore.IsZero() {
		return nil, hitl.Errorf(hitl.EINVALID, "purge: the cut-off time is required")
	}
	limit := p.BatchLimit()
	afterAt, afterID := int64(math.MinInt64), ""
	if p.After != "" {
		var err error
		if afterAt, afterID, err = decodeCursor(p.After); err != nil {
			return nil, err
		}
	}
	ids, next, err := s.purgeCandidates(ctx, p.EndedBefore.UnixMilli(), afterAt, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("purge: %w", err)
	}
	out := &hitl.Purged{Rows: noRows(), Next: next}
	if len(ids) == 0 {
		return out, nil
	}
	if p.DryRun {
		err = s.countPurge(ctx, ids, out)
	} else {
		err = s.writeAlone(ctx, func(ctx context.Context, tx *sql.Tx) error {
			return deletePurge(ctx, tx, ids, out)
		})
	}
	if err != nil {
		return nil, fmt.Errorf("purge: %w", err)
	}
	return out, nil
}

// noRows is a count of no rows deleted from each table.
func noRows() map[string]int {
	rows := map[string]int{"interactions": 0}
	for _, table := range purgeTables {
		rows[table] = 0
	}
	return rows
}

// purgeCandidates returns the IDs of up to limit ended interactions after
// the cursor (afterAt, afterID), and the cursor after the last of them
// when there may be more.
func (s *Store) purgeCandidates(ctx context.Context, before, afterAt int64, afterID string, limit int) ([]string, string, error) {
	rows, err := s.r.QueryContext(ctx, sqlPurgeCandidates, before, afterAt, afterID, limit)
	if err != nil {
		return nil, "", fmt.Errorf("find ended interactions: %w", err)
	}
	defer rows.Close()
	var (
		ids  []string
		last int64
	)
	for rows.Next() {
		var id string
		if err := rows.Scan(&id, &last); err != nil {
			return nil, "", fmt.Errorf("find ended interactions: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("find ended interactions: %w", err)
	}
	next := ""
	if len(ids) == limit {
		next = encodeCursor(last, ids[len(ids)-1])
	}
	return ids, next, nil
}

// withoutNewest returns ids without the interaction of the newest event,
// read through q, and that list as a JSON array (for json_each).
func withoutNewest(ctx context.Context, q interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}, ids []string) ([]string, string, error) {
	var newest sql.NullString // NULL: the newest event is a rule's, of no interaction
	err := q.QueryRowContext(ctx, sqlNewestEventOwner).Scan(&newest)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, "", fmt.Errorf("read the newest event: %w", err)
	}
	kept := make([]string, 0, len(ids))
	for _, id := range ids {
		if !newest.Valid || id != newest.String {
			kept = append(kept, id)
		}
	}
	list, err := json.Marshal(kept)
	return kept, string(list), err
}

// deletePurge deletes the interactions ids (but the newest event's) and
// their rows in tx, and records in out what went.
func deletePurge(ctx context.Context, tx *sql.Tx, ids []string, out *hitl.Purged) error {
	out.IDs, out.Rows = nil, noRows()
	ids, list, err := withoutNewest(ctx, tx, ids)
	if err != nil || len(ids) == 0 {
		return err
	}
	if err := markPurged(ctx, tx, list); err != nil {
		return err
	}
	for _, table := range purgeTables {
		res, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE interaction_id IN (SELECT value FROM json_each(?))`, list)
		if err != nil {
			return fmt.Errorf("delete %s: %w", table, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("delete %s: %w", table, err)
		}
		out.Rows[table] = int(n)
	}
	rows, err := tx.QueryContext(ctx, `DELETE FROM interactions WHERE id IN (SELECT value FROM json_each(?)) RETURNING id`, list)
	if err != nil {
		return fmt.Errorf("delete interactions: %w", err)
	}
	defer rows.Close()
	gone := make(map[string]bool, len(ids))
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return fmt.Errorf("delete interactions: %w", err)
		}
		gone[id] = true
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("delete interactions: %w", err)
	}
	for _, id := range ids { // in the order they were created
		if gone[id] {
			out.IDs = append(out.IDs, id)
		}
	}
	out.Rows["interactions"] = len(out.IDs)
	return nil
}

// sqlMarkPurged raises purge_state's events_through to the newest event
// of the interactions in the JSON array ?1, about to be deleted.
const sqlMarkPurged = `INSERT INTO purge_state (id, events_through)
	SELECT 1, max(seq) FROM events WHERE interaction_id IN (SELECT value FROM json_each(?1))
	HAVING max(seq) IS NOT NULL
	ON CONFLICT (id) DO UPDATE SET events_through = max(events_through, excluded.events_through)`

// markPurged records in tx how far the log has holes once the events of
// the interactions in list (a JSON array) are deleted.
func markPurged(ctx context.Context, tx *sql.Tx, list string) error {
	if _, err := tx.ExecContext(ctx, sqlMarkPurged, list); err != nil {
		return fmt.Errorf("record the purged events: %w", err)
	}
	return nil
}

// PurgedThrough returns the highest seq of an event a purge deleted, 0 if
// none (see hitl.Store).
func (s *Store) PurgedThrough(ctx context.Context) (int64, error) {
	var seq int64
	err := s.r.QueryRowContext(ctx, `SELECT coalesce(max(events_through), 0) FROM purge_state`).Scan(&seq)
	if err != nil {
		return 0, fmt.Errorf("read how far events were purged: %w", err)
	}
	return seq, nil
}

// countPurge records in out what deletePurge would delete of ids.
func (s *Store) countPurge(ctx context.Context, ids []string, out *hitl.Purged) error {
	ids, list, err := withoutNewest(ctx, s.r, ids)
	if err != nil {
		return err
	}
	out.IDs = ids
	out.Rows["interactions"] = len(ids)
	for _, table := range purgeTables {
		var n int
		err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM `+table+` WHERE interaction_id IN (SELECT value FROM json_each(?))`, list).Scan(&n)
		if err != nil {
			return fmt.Errorf("count %s: %w", table, err)
		}
		out.Rows[table] = n
	}
	return nil
}
