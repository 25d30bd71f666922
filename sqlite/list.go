package sqlite

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/hitl-sh/hitl"
)

// dueKey orders by deadline with the interactions that have none last: the
// expression interactions_pending_due indexes (migration 0013).
const dueKey = "coalesce(deadline, 9223372036854775807)"

// ListInteractions returns a page of interactions matching f in f's order
// (newest first: by creation time, then id; or soonest deadline first,
// then id, none last), and the cursor of the next page, "" when this page
// is the last. A cursor this store did not make for that order is EINVALID.
func (s *Store) ListInteractions(ctx context.Context, f hitl.ListFilter) ([]*hitl.Interaction, string, error) {
	q, args, limit, err := listQuery(f)
	if err != nil {
		return nil, "", err
	}
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, "", fmt.Errorf("list interactions: %w", err)
	}
	list, err := scanInteractions(rows, limit+1)
	if err != nil {
		return nil, "", fmt.Errorf("list interactions: %w", err)
	}
	next := ""
	if len(list) > limit {
		list = list[:limit]
		next = encodeListCursor(list[limit-1], f.Sort)
	}
	return list, next, nil
}

// listQuery returns ListInteractions' query for f, its parameters and the
// page size: it reads one row more, which tells whether there is a next
// page.
func listQuery(f hitl.ListFilter) (string, []any, int, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = hitl.DefaultListLimit
	}
	limit = min(limit, hitl.MaxListLimit)

	where, args := listWhere(f, true, true)
	from := ` FROM interactions`
	order := ` ORDER BY created_at DESC, id DESC`
	if f.Sort.ByDeadline() {
		order = ` ORDER BY ` + dueKey + `, id`
		if f.Status == hitl.StatusPending {
			// The planner, without ANALYZE statistics, would rather take
			// interactions_status_created and sort every pending row; the
			// partial index needs the status as a literal (listWhere
			// puts the status first).
			from = ` FROM interactions INDEXED BY interactions_pending_due`
			where[0], args = `status = 'pending'`, args[1:]
		}
	}
	if f.Cursor != "" {
		key, id, err := decodeListCursor(f.Cursor, f.Sort)
		if err != nil {
			return "", nil, 0, err
		}
		if f.Sort.ByDeadline() {
			// The first bound makes it a range of the index (the row
			// value alone is a scan from its start).
			where, args = append(where, dueKey+" >= ?", "("+dueKey+", id) > (?, ?)"), append(args, key, key, id)
		} else {
			where, args = append(where, "(created_at, id) < (?, ?)"), append(args, key, id)
		}
	}
	q := `SELECT ` + cols + from + whereSQL(where) + order + ` LIMIT ?`
	return q, append(args, limit+1), limit, nil
}

// listWhere returns the conditions and parameters of f's filters, with
// its agents and types when withAgents and withTypes.
func listWhere(f hitl.ListFilter, withAgents, withTypes bool) (where []string, args []any) {
	if f.Status != "" {
		where, args = append(where, "status = ?"), append(args, string(f.Status))
	}
	if f.IdempotencyKey != "" {
		where, args = append(where, "idempotency_key = ?"), append(args, f.IdempotencyKey)
	}
	if f.CreatedBy != "" {
		where, args = append(where, "created_by = ?"), append(args, f.CreatedBy)
	}
	if f.SessionID != "" {
		// session_id <> '' lets interactions_session apply.
		where, args = append(where, "session_id = ? AND session_id <> ''"), append(args, f.SessionID)
	}
	if f.Project != "" {
		where, args = append(where, sqlProject+" = ?"), append(args, f.Project)
	}
	if f.Workflow {
		// Lets interactions_workflow apply (migration 0018).
		where = append(where, "workflow IS NOT NULL")
	}
	if f.VisibleTo != nil {
		where, args = append(where, sqlVisible), append(args, visibleArgs(f.VisibleTo)...)
	}
	in := func(col string, values []string) {
		if len(values) == 0 {
			return
		}
		where = append(where, col+" IN (?"+strings.Repeat(", ?", len(values)-1)+")")
		for _, v := range values {
			args = append(args, v)
		}
	}
	if withAgents {
		in("source_agent", f.Agents)
	}
	if withTypes {
		types := make([]string, len(f.Types))
		for i, t := range f.Types {
			types[i] = string(t)
		}
		in("type", types)
	}
	in("result_channel", f.Channels)
	if f.Query != "" {
		where = append(where, "("+containsFold+"(question, ?) OR "+containsFold+"(context, ?))")
		args = append(args, f.Query, f.Query)
	}
	return where, args
}

// whereSQL joins conditions into a WHERE clause ("" for none).
func whereSQL(where []string) string {
	if len(where) == 0 {
		return ""
	}
	return ` WHERE ` + strings.Join(where, " AND ")
}

// encodeListCursor makes the opaque cursor of the page after in, in the order
// sort: "ms:id" newest first, "d:key:id" by deadline.
func encodeListCursor(in *hitl.Interaction, sort hitl.ListSort) string {
	raw := strconv.FormatInt(in.CreatedAt.UnixMilli(), 10) + ":" + in.ID
	if sort.ByDeadline() {
		key := int64(math.MaxInt64)
		if !in.Deadline.IsZero() {
			key = in.Deadline.UnixMilli()
		}
		raw = "d:" + strconv.FormatInt(key, 10) + ":" + in.ID
	}
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// decodeListCursor is the inverse of encodeListCursor for the order sort.
func decodeListCursor(c string, sort hitl.ListSort) (int64, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, "", hitl.ErrCursorSort(sort)
	}
	raw, byDeadline := strings.CutPrefix(string(b), "d:")
	if byDeadline != sort.ByDeadline() {
		return 0, "", hitl.ErrCursorSort(sort)
	}
	ms, id, ok := strings.Cut(raw, ":")
	at, perr := strconv.ParseInt(ms, 10, 64)
	if !ok || perr != nil || id == "" {
		return 0, "", hitl.ErrCursorSort(sort)
	}
	return at, id, nil
}
