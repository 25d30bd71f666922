package postgres

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hitl-sh/hitl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// dueKey orders by deadline with the interactions that have none last: the
// expression interactions_pending_due indexes (migration 0012).
const dueKey = "coalesce(deadline, 'infinity'::timestamptz)"

// ListInteractions returns a page of interactions matching f in f's order
// (newest first: by creation time, then id; or soonest deadline first,
// then id, none last), and the cursor of the next page, "" when this page
// is the last. A cursor this store did not make for that order is EINVALID.
func (s *Store) ListInteractions(ctx context.Context, f hitl.ListFilter) ([]*hitl.Interaction, string, error) {
	q, args, limit, err := listQuery(f)
	if err != nil {
		return nil, "", err
	}
	var list []*hitl.Interaction
	err = s.with(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		list, err = scanInteractions(rows, limit+1)
		return err
	})
	if err != nil {
		return nil, "", fmt.Errorf("list interactions: %w", badText(err))
	}
	next := ""
	if len(list) > limit {
		list = list[:limit]
		last := list[limit-1]
		if f.Sort.ByDeadline() {
			next = encodeDueCursor(last)
		} else {
			next = encodeCursor(last.CreatedAt.UnixMilli(), last.ID)
		}
	}
	return list, next, nil
}

// listQuery returns ListInteractions' query for f, its parameters and the
// page's size (the query asks for one more row, which tells whether there
// is a next page).
func listQuery(f hitl.ListFilter) (string, []any, int, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = hitl.DefaultListLimit
	}
	limit = min(limit, hitl.MaxListLimit)

	w := listWhere(f, true, true)
	order := ` ORDER BY created_at DESC, id DESC`
	if f.Sort.ByDeadline() {
		order = ` ORDER BY ` + dueKey + `, id`
	}
	if f.Cursor != "" {
		if f.Sort.ByDeadline() {
			key, id, err := decodeDueCursor(f.Cursor)
			if err != nil {
				return "", nil, 0, err
			}
			w.add("(" + dueKey + ", id) > (" + w.arg(key) + ", " + w.arg(id) + ")")
		} else {
			at, id, err := decodeCursor(f.Cursor)
			if err != nil {
				return "", nil, 0, hitl.ErrCursorSort(f.Sort)
			}
			w.add("(created_at, id) < (" + w.arg(at) + ", " + w.arg(id) + ")")
		}
	}
	q := `SELECT ` + cols + ` FROM interactions` + w.sql() + order + ` LIMIT ` + w.arg(limit+1) // one more tells whether there is a next page
	return q, w.args, limit, nil
}

// conditions is a WHERE clause being built, with its parameters.
type conditions struct {
	where []string
	args  []any
}

// arg adds a parameter and returns its placeholder.
func (w *conditions) arg(v any) string {
	w.args = append(w.args, v)
	return "$" + strconv.Itoa(len(w.args))
}

// add adds a condition.
func (w *conditions) add(cond string) { w.where = append(w.where, cond) }

// sql returns the WHERE clause ("" for none).
func (w *conditions) sql() string {
	if len(w.where) == 0 {
		return ""
	}
	return ` WHERE ` + strings.Join(w.where, " AND ")
}

// listWhere returns the conditions of f's filters, with its agents and
// types when withAgents and withTypes.
func listWhere(f hitl.ListFilter, withAgents, withTypes bool) *conditions {
	w := &conditions{}
	if f.Status != "" {
		w.add("status = " + w.arg(string(f.Status)))
	}
	if f.IdempotencyKey != "" {
		w.add("idempotency_key = " + w.arg(f.IdempotencyKey))
	}
	if f.CreatedBy != "" {
		w.add("created_by = " + w.arg(f.CreatedBy))
	}
	if f.SessionID != "" {
		// session_id <> '' lets interactions_session apply.
		w.add("session_id = " + w.arg(f.SessionID) + " AND session_id <> ''")
	}
	if f.Project != "" {
		w.add(sqlProject + " = " + w.arg(f.Project))
	}
	if f.Workflow {
		// Lets interactions_workflow apply (migration 0017).
		w.add("workflow IS NOT NULL")
	}
	if f.VisibleTo != nil {
		w.add(visibleClause(f.VisibleTo, w.arg))
	}
	if withAgents && len(f.Agents) > 0 {
		w.add("source_agent = ANY(" + w.arg(f.Agents) + "::text[])")
	}
	if withTypes && len(f.Types) > 0 {
		types := make([]string, len(f.Types))
		for i, t := range f.Types {
			types[i] = string(t)
		}
		w.add("type = ANY(" + w.arg(types) + "::text[])")
	}
	if len(f.Channels) > 0 {
		w.add("result_channel = ANY(" + w.arg(f.Channels) + "::text[])")
	}
	if f.Query != "" {
		p := w.arg(f.Query)
		w.add("(strpos(lower(question), lower(" + p + ")) > 0 OR strpos(lower(context), lower(" + p + ")) > 0)")
	}
	return w
}

// encodeDueCursor makes the opaque cursor of the page after in, soonest
// deadline first: "d:ms:id", ms the deadline or math.MaxInt64 for none.
func encodeDueCursor(in *hitl.Interaction) string {
	key := int64(math.MaxInt64)
	if !in.Deadline.IsZero() {
		key = in.Deadline.UnixMilli()
	}
	return base64.RawURLEncoding.EncodeToString([]byte("d:" + strconv.FormatInt(key, 10) + ":" + in.ID))
}

// decodeDueCursor is the inverse of encodeDueCursor: the deadline as
// timestamptz (infinity for none) and the id.
func decodeDueCursor(c string) (pgtype.Timestamptz, string, error) {
	bad := hitl.ErrCursorSort(hitl.SortDeadline)
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return pgtype.Timestamptz{}, "", bad
	}
	raw, ok := strings.CutPrefix(string(b), "d:")
	if !ok {
		return pgtype.Timestamptz{}, "", bad
	}
	ms, id, ok := strings.Cut(raw, ":")
	at, perr := strconv.ParseInt(ms, 10, 64)
	if !ok || perr != nil || !validCursorID(id) {
		return pgtype.Timestamptz{}, "", bad
	}
	if at == math.MaxInt64 {
		return pgtype.Timestamptz{InfinityModifier: pgtype.Infinity, Valid: true}, id, nil
	}
	if at < minCursorMillis || at > maxCursorMillis {
		return pgtype.Timestamptz{}, "", bad
	}
	return pgtype.Timestamptz{Time: time.UnixMilli(at).UTC(), Valid: true}, id, nil
}

// validCursorID reports whether id can be an interaction id in a cursor:
// non-empty UTF-8 text without NUL, which a text parameter takes.
func validCursorID(id string) bool {
	return id != "" && utf8.ValidString(id) && strings.IndexByte(id, 0) < 0
}
