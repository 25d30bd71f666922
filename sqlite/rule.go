package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/hitl-sh/hitl"
	sqlite3 "modernc.org/sqlite/lib"
)

// ruleColumns are the columns scanRule reads, in order.
var ruleColumns = []string{
	"id", "effect", "source_agent", "action_name", "arg_match", "message",
	"created_by", "created_at", "expires_at", "revoked_at", "revoked_by", "interaction_id", "asked_by", "within", "kind",
}

var (
	ruleCols = strings.Join(ruleColumns, ", ")

	sqlInsertRule = `INSERT INTO rules (` + ruleCols + `)
		VALUES (` + strings.TrimSuffix(strings.Repeat("?, ", len(ruleColumns)), ", ") + `)`
)

// scanRule reads the ruleColumns of one row.
func scanRule(sc scanner) (*hitl.Rule, error) {
	var (
		r                            hitl.Rule
		match                        []byte
		created                      int64
		expires, revoked             sql.NullInt64
		effect, revokedBy, fromInter string
		within                       []byte
	)
	err := sc.Scan(&r.ID, &effect, &r.SourceAgent, &r.ActionName, &match, &r.Message,
		&r.CreatedBy, &created, &expires, &revoked, &revokedBy, &fromInter, &r.AskedBy, &within, &r.Kind)
	if err != nil {
		return nil, err
	}
	r.Effect, r.RevokedBy, r.InteractionID = hitl.RuleEffect(effect), revokedBy, fromInter
	r.CreatedAt = time.UnixMilli(created).UTC()
	r.ExpiresAt, r.RevokedAt = optionalTime(expires), optionalTime(revoked)
	if err := unmarshal(match, &r.Match, "match"); err != nil {
		return nil, fmt.Errorf("rule %s: %w", r.ID, err)
	}
	if err := unmarshal(within, &r.Within, "within"); err != nil {
		return nil, fmt.Errorf("rule %s: %w", r.ID, err)
	}
	return &r, nil
}

// optionalTime reads a nullable time: nil for NULL.
func optionalTime(ms sql.NullInt64) *time.Time {
	if !ms.Valid {
		return nil
	}
	t := fromMillis(ms)
	return &t
}

// optionalMillis is the inverse of optionalTime.
func optionalMillis(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMilli()
}

// newRule returns a copy of r as it will be stored: an ID (a UUIDv7 when
// empty), a creation time (at when zero), times to the millisecond. A nil
// r gives nil.
func (s *Store) newRule(r *hitl.Rule, at time.Time) (*hitl.Rule, error) {
	if r == nil {
		return nil, nil
	}
	out := *r
	if out.ID == "" {
		id, err := uuid.NewV7()
		if err != nil {
			return nil, fmt.Errorf("mint rule id: %w", err)
		}
		out.ID = id.String()
	}
	if out.CreatedAt.IsZero() {
		out.CreatedAt = at
	}
	out.CreatedAt = truncate(out.CreatedAt)
	for _, p := range []**time.Time{&out.ExpiresAt, &out.RevokedAt} {
		if *p != nil {
			t := truncate(**p)
			*p = &t
		}
	}
	return &out, nil
}

// insertRule inserts r in tx and appends its rule_created event (of the
// interaction in, if any), which it returns.
func (s *Store) insertRule(ctx context.Context, tx *sql.Tx, r *hitl.Rule, via string, in *hitl.Interaction) (*hitl.Event, error) {
	match, err := encode(r.Match, r.Match == nil, "match")
	if err != nil {
		return nil, err
	}
	within, err := encode(r.Within, r.Within == nil, "within")
	if err != nil {
		return nil, err
	}
	_, err = tx.ExecContext(ctx, sqlInsertRule, r.ID, string(r.Effect), r.SourceAgent, r.ActionName, match, r.Message,
		r.CreatedBy, r.CreatedAt.UnixMilli(), optionalMillis(r.ExpiresAt), optionalMillis(r.RevokedAt), r.RevokedBy, r.InteractionID, r.AskedBy, within, r.Kind)
	if isConstraint(err, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY) {
		return nil, hitl.Errorf(hitl.ECONFLICT, "rule %q already exists", r.ID)
	} else if err != nil {
		return nil, fmt.Errorf("insert rule: %w", err)
	}
	ev := &hitl.Event{Type: hitl.EventRuleCreated, InteractionID: r.InteractionID, At: r.CreatedAt,
		Actor: r.CreatedBy, Channel: via, Detail: r.ID, Interaction: in}
	return ev, s.insertEvent(ctx, tx, ev)
}

// CreateRule inserts r and appends its rule_created event in one
// transaction. An empty r.ID gets a UUIDv7, a zero CreatedAt the store's
// clock; times are kept to the millisecond. r is not modified: the stored
// rule is returned. An existing ID is ECONFLICT.
func (s *Store) CreateRule(ctx context.Context, r *hitl.Rule, via string) (*hitl.Rule, *hitl.Event, error) {
	out, err := s.newRule(r, s.now())
	if err != nil {
		return nil, nil, fmt.Errorf("create rule: %w", err)
	}
	var ev *hitl.Event
	err = s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var (
			in  *hitl.Interaction
			err error
		)
		if out.InteractionID != "" {
			in, err = scanInteraction(tx.StmtContext(ctx, s.st.interactionW).QueryRowContext(ctx, out.InteractionID))
			if errors.Is(err, sql.ErrNoRows) {
				return hitl.Errorf(hitl.ENOTFOUND, "interaction %q not found", out.InteractionID)
			} else if err != nil {
				return fmt.Errorf("read interaction: %w", err)
			}
		}
		ev, err = s.insertRule(ctx, tx, out, via, in)
		return err
	})
	switch code := hitl.ErrorCode(err); {
	case code == hitl.ECONFLICT || code == hitl.ENOTFOUND:
		return nil, nil, err
	case err != nil:
		return nil, nil, fmt.Errorf("create rule: %w", err)
	}
	return out, ev, nil
}

// Rule returns the rule with id, or ENOTFOUND.
func (s *Store) Rule(ctx context.Context, id string) (*hitl.Rule, error) {
	r, err := scanRule(s.r.QueryRowContext(ctx, `SELECT `+ruleCols+` FROM rules WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, hitl.Errorf(hitl.ENOTFOUND, "rule %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("get rule %s: %w", id, err)
	}
	return r, nil
}

// Rules returns a page of the rules matching f, oldest first (by creation
// time, then ID), and the cursor of the next page, "" when this page is
// the last. A cursor that this store did not make is EINVALID.
func (s *Store) Rules(ctx context.Context, f hitl.RuleFilter) ([]*hitl.Rule, string, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = hitl.DefaultListLimit
	}
	limit = min(limit, hitl.MaxListLimit)
	var where []string
	var args []any
	if !f.ActiveAt.IsZero() {
		where = append(where, "revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)")
		args = append(args, f.ActiveAt.UnixMilli())
	}
	for _, c := range []struct{ col, v string }{{"created_by", f.CreatedBy}, {"source_agent", f.SourceAgent}, {"action_name", f.ActionName}} {
		if c.v != "" {
			where, args = append(where, c.col+" = ?"), append(args, c.v)
		}
	}
	if f.Cursor != "" {
		at, id, err := decodeCursor(f.Cursor)
		if err != nil {
			return nil, "", err
		}
		where, args = append(where, "(created_at, id) > (?, ?)"), append(args, at, id)
	}
	q := `SELECT ` + ruleCols + ` FROM rules`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY created_at, id LIMIT ?`
	rows, err := s.r.QueryContext(ctx, q, append(args, limit+1)...)
	if err != nil {
		return nil, "", fmt.Errorf("list rules: %w", err)
	}
	list, err := scanRules(rows)
	if err != nil {
		return nil, "", fmt.Errorf("list rules: %w", err)
	}
	next := ""
	if len(list) > limit {
		list = list[:limit]
		last := list[limit-1]
		next = encodeCursor(last.CreatedAt.UnixMilli(), last.ID)
	}
	return list, next, nil
}

// scanRules reads every row and closes rows.
func scanRules(rows *sql.Rows) ([]*hitl.Rule, error) {
	defer rows.Close()
	list := []*hitl.Rule{}
	for rows.Next() {
		r, err := scanRule(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, r)
	}
	return list, rows.Err()
}

// RevokeRule marks the rule revoked and appends its rule_revoked event in
// one transaction. A rule revoked already is returned unchanged with a nil
// event; an unknown one is ENOTFOUND.
func (s *Store) RevokeRule(ctx context.Context, id, by, via string, at time.Time) (*hitl.Rule, *hitl.Event, error) {
	if at.IsZero() {
		at = s.now()
	}
	at = truncate(at)
	var (
		out *hitl.Rule
		ev  *hitl.Event
	)
	err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		ev = nil
		var err error
		out, err = scanRule(tx.QueryRowContext(ctx, `UPDATE rules SET revoked_at = ?, revoked_by = ?
			WHERE id = ? AND revoked_at IS NULL RETURNING `+ruleCols, at.UnixMilli(), by, id))
		if errors.Is(err, sql.ErrNoRows) {
			out, err = scanRule(tx.QueryRowContext(ctx, `SELECT `+ruleCols+` FROM rules WHERE id = ?`, id))
			if errors.Is(err, sql.ErrNoRows) {
				return hitl.Errorf(hitl.ENOTFOUND, "rule %q not found", id)
			}
			return err
		} else if err != nil {
			return err
		}
		ev = &hitl.Event{Type: hitl.EventRuleRevoked, At: at, Actor: by, Channel: via, Detail: id}
		return s.insertEvent(ctx, tx, ev)
	})
	switch {
	case hitl.ErrorCode(err) == hitl.ENOTFOUND:
		return nil, nil, err
	case err != nil:
		return nil, nil, fmt.Errorf("revoke rule %s: %w", id, err)
	}
	return out, ev, nil
}

// ActiveRules returns the rules of sourceAgent, or of every agent, for the
// action named actionName and for its kind, in force at now, oldest first.
func (s *Store) ActiveRules(ctx context.Context, sourceAgent, actionName, kind string, now time.Time) ([]*hitl.Rule, error) {
	rows, err := s.st.activeRules.QueryContext(ctx, actionName, sourceAgent, now.UnixMilli(), kind)
	if err != nil {
		return nil, fmt.Errorf("active rules: %w", err)
	}
	list, err := scanRules(rows)
	if err != nil {
		return nil, fmt.Errorf("active rules: %w", err)
	}
	return list, nil
}

// RulesVersion returns the rules' version, which the rules table's
// triggers change with every change to it.
func (s *Store) RulesVersion(ctx context.Context) (int64, error) {
	var v int64
	if err := s.st.rulesVersion.QueryRowContext(ctx).Scan(&v); err != nil {
		return 0, fmt.Errorf("rules version: %w", err)
	}
	return v, nil
}
