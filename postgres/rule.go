package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/hitl-sh/hitl"
	"github.com/jackc/pgx/v5"
)

// rowQuerier is a connection or a transaction (a querier that also reads
// one row).
type rowQuerier interface {
	querier
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// ruleColumns are the columns scanRule reads, in order.
var ruleColumns = []string{
	"id", "effect", "source_agent", "action_name", "arg_match", "message",
	"created_by", "created_at", "expires_at", "revoked_at", "revoked_by", "interaction_id", "asked_by", "within", "kind",
}

var (
	ruleCols = strings.Join(ruleColumns, ", ")

	sqlRule = `SELECT ` + ruleCols + ` FROM rules WHERE id = $1`

	// sqlInsertRule inserts a rule ($1-$15) and its rule_created event
	// ($16 the channel, $17 the NOTIFY channel).
	sqlInsertRule = `WITH ins AS (
			INSERT INTO rules (` + ruleCols + `)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
			RETURNING id, created_at, created_by, interaction_id
		), ev AS (
			INSERT INTO events (type, interaction_id, at, actor, channel, detail)
			SELECT 'rule_created', nullif(interaction_id, ''), created_at, created_by, $16, id FROM ins
			RETURNING seq
		)
		SELECT seq, pg_notify($17, seq::text) FROM ev`

	// sqlRevokeRule revokes a rule not yet revoked ($1, at $2 by $3) and
	// appends its rule_revoked event ($4 the channel, $5 the NOTIFY
	// channel). No row: it does not exist or was revoked already.
	sqlRevokeRule = `WITH up AS (
			UPDATE rules SET revoked_at = $2, revoked_by = $3
			WHERE id = $1 AND revoked_at IS NULL
			RETURNING ` + ruleCols + `
		), ev AS (
			INSERT INTO events (type, at, actor, channel, detail)
			SELECT 'rule_revoked', $2, $3, $4, id FROM up
			RETURNING seq
		)
		SELECT ev.seq, pg_notify($5, ev.seq::text), ` + prefixed("up.", ruleColumns) + ` FROM up, ev`

	// sqlActiveRules reads the rules in force at $3 for the agent $2 (or
	// every agent) on the action name $1 and on the kind $4 (none when
	// '').
	sqlActiveRules = `SELECT ` + ruleCols + ` FROM rules
		WHERE action_name = $1 AND kind = '' AND source_agent IN ($2, '*') AND revoked_at IS NULL
			AND (expires_at IS NULL OR expires_at > $3)
		UNION ALL
		SELECT ` + ruleCols + ` FROM rules
		WHERE kind = $4 AND kind <> '' AND source_agent IN ($2, '*') AND revoked_at IS NULL
			AND (expires_at IS NULL OR expires_at > $3)
		ORDER BY created_at, id`
)

// prefixed lists cols, each prefixed with prefix.
func prefixed(prefix string, cols []string) string {
	return prefix + strings.Join(cols, ", "+prefix)
}

// scanRule reads the ruleColumns of one row, after the columns scanned
// into before.
func scanRule(row pgx.Row, before ...any) (*hitl.Rule, error) {
	var (
		r       hitl.Rule
		effect  string
		match   *string
		within  *string
		created time.Time
	)
	err := row.Scan(append(before, &r.ID, &effect, &r.SourceAgent, &r.ActionName, &match, &r.Message,
		&r.CreatedBy, &created, &r.ExpiresAt, &r.RevokedAt, &r.RevokedBy, &r.InteractionID, &r.AskedBy, &within, &r.Kind)...)
	if err != nil {
		return nil, err
	}
	r.Effect, r.CreatedAt = hitl.RuleEffect(effect), created.UTC()
	for _, p := range []**time.Time{&r.ExpiresAt, &r.RevokedAt} {
		if *p != nil {
			t := (*p).UTC()
			*p = &t
		}
	}
	if err := unmarshal(match, &r.Match, "match"); err != nil {
		return nil, fmt.Errorf("rule %s: %w", r.ID, err)
	}
	if err := unmarshal(within, &r.Within, "within"); err != nil {
		return nil, fmt.Errorf("rule %s: %w", r.ID, err)
	}
	return &r, nil
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

// insertRule inserts r and appends its rule_created event (of the
// interaction in, if any), which it returns.
func (s *Store) insertRule(ctx context.Context, q rowQuerier, r *hitl.Rule, via string, in *hitl.Interaction) (*hitl.Event, error) {
	match, err := encode(r.Match, r.Match == nil, "match")
	if err != nil {
		return nil, err
	}
	within, err := encode(r.Within, r.Within == nil, "within")
	if err != nil {
		return nil, err
	}
	ev := &hitl.Event{Type: hitl.EventRuleCreated, InteractionID: r.InteractionID, At: r.CreatedAt,
		Actor: r.CreatedBy, Channel: via, Detail: r.ID, Interaction: in}
	err = q.QueryRow(ctx, sqlInsertRule, r.ID, string(r.Effect), r.SourceAgent, r.ActionName, match, r.Message,
		r.CreatedBy, r.CreatedAt, r.ExpiresAt, r.RevokedAt, r.RevokedBy, r.InteractionID, r.AskedBy, within, r.Kind, via, s.channel).Scan(&ev.Seq, nil)
	switch sqlState(err) {
	case uniqueViolation:
		return nil, hitl.Errorf(hitl.ECONFLICT, "rule %q already exists", r.ID)
	case foreignKeyViolation:
		return nil, hitl.Errorf(hitl.ENOTFOUND, "interaction %q not found", r.InteractionID)
	}
	if err != nil {
		return nil, fmt.Errorf("insert rule: %w", badText(err))
	}
	return ev, nil
}

// CreateRule inserts r and appends its rule_created event in one
// statement. An empty r.ID gets a UUIDv7, a zero CreatedAt the store's
// clock; times are kept to the millisecond. r is not modified: the stored
// rule is returned. An existing ID is ECONFLICT.
func (s *Store) CreateRule(ctx context.Context, r *hitl.Rule, via string) (*hitl.Rule, *hitl.Event, error) {
	out, err := s.newRule(r, s.now())
	if err != nil {
		return nil, nil, fmt.Errorf("create rule: %w", err)
	}
	var in *hitl.Interaction
	if out.InteractionID != "" {
		if in, err = s.Interaction(ctx, out.InteractionID); err != nil {
			return nil, nil, err
		}
	}
	var ev *hitl.Event
	err = s.with(ctx, func(c *pgx.Conn) error {
		ev, err = s.insertRule(ctx, c, out, via, in)
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
	var r *hitl.Rule
	err := s.with(ctx, func(c *pgx.Conn) error {
		var err error
		r, err = scanRule(c.QueryRow(ctx, sqlRule, id))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, hitl.Errorf(hitl.ENOTFOUND, "rule %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("get rule %s: %w", id, badText(err))
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
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if !f.ActiveAt.IsZero() {
		where = append(where, "revoked_at IS NULL AND (expires_at IS NULL OR expires_at > "+arg(f.ActiveAt)+")")
	}
	for _, c := range []struct{ col, v string }{{"created_by", f.CreatedBy}, {"source_agent", f.SourceAgent}, {"action_name", f.ActionName}} {
		if c.v != "" {
			where = append(where, c.col+" = "+arg(c.v))
		}
	}
	if f.Cursor != "" {
		at, id, err := decodeCursor(f.Cursor)
		if err != nil {
			return nil, "", err
		}
		where = append(where, "(created_at, id) > ("+arg(at)+", "+arg(id)+")")
	}
	q := `SELECT ` + ruleCols + ` FROM rules`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY created_at, id LIMIT ` + arg(limit+1)
	var list []*hitl.Rule
	err := s.with(ctx, func(c *pgx.Conn) error {
		var err error
		list, err = queryRules(ctx, c, q, args...)
		return err
	})
	if err != nil {
		return nil, "", fmt.Errorf("list rules: %w", badText(err))
	}
	next := ""
	if len(list) > limit {
		list = list[:limit]
		last := list[limit-1]
		next = encodeCursor(last.CreatedAt.UnixMilli(), last.ID)
	}
	return list, next, nil
}

// queryRules runs a query of ruleColumns and reads every row.
func queryRules(ctx context.Context, q querier, sql string, args ...any) ([]*hitl.Rule, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
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
// one statement. A rule revoked already is returned unchanged with a nil
// event; an unknown one is ENOTFOUND.
func (s *Store) RevokeRule(ctx context.Context, id, by, via string, at time.Time) (*hitl.Rule, *hitl.Event, error) {
	if at.IsZero() {
		at = s.now()
	}
	at = truncate(at)
	ev := &hitl.Event{Type: hitl.EventRuleRevoked, At: at, Actor: by, Channel: via, Detail: id}
	var out *hitl.Rule
	err := s.with(ctx, func(c *pgx.Conn) error {
		var err error
		out, err = scanRule(c.QueryRow(ctx, sqlRevokeRule, id, at, by, via, s.channel), &ev.Seq, nil)
		if errors.Is(err, pgx.ErrNoRows) {
			ev = nil
			out, err = scanRule(c.QueryRow(ctx, sqlRule, id))
		}
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, hitl.Errorf(hitl.ENOTFOUND, "rule %q not found", id)
	} else if err != nil {
		return nil, nil, fmt.Errorf("revoke rule %s: %w", id, badText(err))
	}
	return out, ev, nil
}

// ActiveRules returns the rules of sourceAgent, or of every agent, for the
// action named actionName, in force at now, oldest first.
func (s *Store) ActiveRules(ctx context.Context, sourceAgent, actionName, kind string, now time.Time) ([]*hitl.Rule, error) {
	var list []*hitl.Rule
	err := s.with(ctx, func(c *pgx.Conn) error {
		var err error
		list, err = queryRules(ctx, c, sqlActiveRules, actionName, sourceAgent, now, kind)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("active rules: %w", badText(err))
	}
	return list, nil
}

// RulesVersion returns the rules' version, which the rules table's
// trigger changes with every statement that changes it.
func (s *Store) RulesVersion(ctx context.Context) (int64, error) {
	var v int64
	err := s.with(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, `SELECT version FROM rules_version WHERE id = 1`).Scan(&v)
	})
	if err != nil {
		return 0, fmt.Errorf("rules version: %w", badText(err))
	}
	return v, nil
}
