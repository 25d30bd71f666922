package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// interactionColumns are the columns scanInteraction reads, in order.
var interactionColumns = []string{
	"id", "type", "question", "context", "options", "form_schema", "default_response",
	"timeout", "deadline", "on_timeout", "idempotency_key", "source_agent", "session_id",
	"metadata", "targets", "created_by", "created_via", "created_at", "request_hash", "status",
	"result_value", "responded_by", "result_channel", "responded_at", "timed_out", "reason",
	"notify", "answer_key", "action", "args_diff", "rule_id", "callback_url", "workflow",
}

// notNull are the interaction columns that are never NULL, with a value
// of their type to read when a LEFT JOIN finds no interaction.
var notNull = map[string]string{
	"id": "''", "type": "''", "question": "''", "context": "''", "timeout": "0", "on_timeout": "''",
	"idempotency_key": "''", "source_agent": "''", "session_id": "''", "created_by": "''",
	"created_via": "''", "created_at": "0", "request_hash": "''", "status": "''", "responded_by": "''",
	"result_channel": "''", "timed_out": "0", "reason": "''", "answer_key": "''", "rule_id": "''", "callback_url": "''",
}

// joinedColumns is columns(prefix) for a LEFT JOIN: the columns that are
// never NULL read as notNull's values when there is no interaction.
func joinedColumns(prefix string) string {
	cs := make([]string, len(interactionColumns))
	for i, c := range interactionColumns {
		cs[i] = prefix + c
		if def, ok := notNull[c]; ok {
			cs[i] = "coalesce(" + prefix + c + ", " + def + ")"
		}
	}
	return strings.Join(cs, ", ")
}

// columns lists interactionColumns for a SELECT, each prefixed with
// prefix (such as "i.").
func columns(prefix string) string {
	return prefix + strings.Join(interactionColumns, ", "+prefix)
}

var (
	cols         = columns("")
	insertParams = strings.TrimSuffix(strings.Repeat("?, ", len(interactionColumns)), ", ")

	sqlInteraction = `SELECT ` + cols + ` FROM interactions WHERE id = ?`

	// The literal idempotency_key <> '' lets SQLite use the partial
	// unique index.
	sqlByKey = `SELECT ` + cols + ` FROM interactions
		WHERE created_by = ? AND idempotency_key = ? AND idempotency_key <> ''`

	// sqlInsert inserts an interaction, unless its agent already has one
	// with its idempotency key: then it changes nothing (SQLite checks
	// the conflict target's index first, so the existing question wins
	// even if the id is taken too). Any other conflict, a taken id, fails.
	sqlInsert = `INSERT INTO interactions (` + cols + `)
		VALUES (` + insertParams + `)
		ON CONFLICT (created_by, idempotency_key) WHERE idempotency_key <> '' DO NOTHING`

	// sqlInsertAtRulesVersion is sqlInsert that also inserts nothing
	// unless the rules' version is its last parameter: a question a rule
	// answered as it was asked is written only if the rules it was decided
	// by are still those in force, without a statement of its own to
	// read them. (The SELECT's WHERE is also what lets SQLite tell its
	// ON CONFLICT from a join's.)
	sqlInsertAtRulesVersion = `INSERT INTO interactions (` + cols + `)
		SELECT ` + insertParams + `
		WHERE (SELECT version FROM rules_version WHERE id = 1) = ?
		ON CONFLICT (created_by, idempotency_key) WHERE idempotency_key <> '' DO NOTHING`

	// sqlResolveFrom is the compare-and-set out of pending. The twelfth
	// parameter is 1 when the deadline must not have passed at the
	// thirteenth.
	sqlResolveFrom = `UPDATE interactions
		SET status = ?, result_value = ?, responded_by = ?, result_channel = ?,
			responded_at = ?, timed_out = ?, reason = ?, answer_key = ?, args_diff = ?, rule_id = ?
		WHERE id = ? AND status = 'pending'
			AND (? = 0 OR deadline IS NULL OR deadline > ?)`

	// sqlResolve is sqlResolveFrom returning the row.
	sqlResolve = sqlResolveFrom + ` RETURNING ` + cols

	sqlInsertEvent = `INSERT INTO events (type, interaction_id, at, actor, channel, detail)
		VALUES (?, ?, ?, ?, ?, ?)`

	sqlCount = `SELECT count(*) FROM interactions WHERE status = ?`

	// sqlNextDeadline reads the first pending question in
	// interactions_pending_due's order: its deadline is the soonest, or
	// NULL when no pending question has one (dueKey puts those last).
	sqlNextDeadline = `SELECT deadline FROM interactions INDEXED BY interactions_pending_due
		WHERE status = 'pending' ORDER BY ` + dueKey + `, id LIMIT 1`

	// sqlDue is a range of interactions_pending_due: dueKey is at most a
	// time only for a question that has a deadline.
	sqlDue = `SELECT ` + cols + ` FROM interactions INDEXED BY interactions_pending_due
		WHERE status = 'pending' AND ` + dueKey + ` <= ?
		ORDER BY ` + dueKey + `, id LIMIT ?`

	// sqlEvents reads events with their interaction, if any (a rule's
	// events may have none).
	sqlEvents = `SELECT e.seq, e.type, e.interaction_id, e.at, e.actor, e.channel, e.detail, ` + joinedColumns("i.") + `
		FROM events e LEFT JOIN interactions i ON i.id = e.interaction_id
		WHERE e.seq > ? ORDER BY e.seq LIMIT ?`

	sqlLastSeq = `SELECT coalesce(max(seq), 0) FROM events`

	// sqlActiveRules reads the rules in force at ?3 for the agent ?2 (or
	// every agent) on the action name ?1 and on the kind ?4 (none when
	// '').
	sqlActiveRules = `SELECT ` + ruleCols + ` FROM rules INDEXED BY rules_scope
		WHERE action_name = ?1 AND kind = '' AND source_agent IN (?2, '*') AND revoked_at IS NULL
			AND (expires_at IS NULL OR expires_at > ?3)
		UNION ALL
		SELECT ` + ruleCols + ` FROM rules INDEXED BY rules_kind
		WHERE kind = ?4 AND kind <> '' AND source_agent IN (?2, '*') AND revoked_at IS NULL
			AND (expires_at IS NULL OR expires_at > ?3)
		ORDER BY created_at, id`
)

// sqlRulesVersion reads the rules' version (migration 0025).
const sqlRulesVersion = `SELECT version FROM rules_version WHERE id = 1`

// statements are the store's prepared statements: those used in write
// transactions are prepared on the writer, the rest on the readers.
type statements struct {
	// writer
	interactionW *sql.Stmt
	byKey        *sql.Stmt
	insert       *sql.Stmt
	// insertAtRulesVersion inserts only at a given rules' version.
	insertAtRulesVersion *sql.Stmt
	resolve              *sql.Stmt
	resolveFrom          *sql.Stmt
	insertEvent          *sql.Stmt
	// rulesVersionW reads the rules' version in a write transaction.
	rulesVersionW *sql.Stmt

	// readers
	interaction  *sql.Stmt
	count        *sql.Stmt
	nextDeadline *sql.Stmt
	due          *sql.Stmt
	events       *sql.Stmt
	lastSeq      *sql.Stmt
	tokenByHash  *sql.Stmt
	session      *sql.Stmt
	activeRules  *sql.Stmt
	rulesVersion *sql.Stmt

	// claims are the claiming UPDATEs of the leased tables, by table, on
	// the writer.
	claims map[string]*sql.Stmt

	all []*sql.Stmt
}

// prepare prepares every statement on w or r.
func (st *statements) prepare(ctx context.Context, w, r *sql.DB) error {
	for _, p := range []struct {
		db    *sql.DB
		dst   **sql.Stmt
		query string
	}{
		{w, &st.interactionW, sqlInteraction},
		{w, &st.byKey, sqlByKey},
		{w, &st.insert, sqlInsert},
		{w, &st.insertAtRulesVersion, sqlInsertAtRulesVersion},
		{w, &st.resolve, sqlResolve},
		{w, &st.resolveFrom, sqlResolveFrom},
		{w, &st.insertEvent, sqlInsertEvent},
		{w, &st.rulesVersionW, sqlRulesVersion},
		{r, &st.interaction, sqlInteraction},
		{r, &st.count, sqlCount},
		{r, &st.nextDeadline, sqlNextDeadline},
		{r, &st.due, sqlDue},
		{r, &st.events, sqlEvents},
		{r, &st.lastSeq, sqlLastSeq},
		{r, &st.tokenByHash, sqlTokenByHash},
		{r, &st.session, sqlSession},
		{r, &st.activeRules, sqlActiveRules},
		{r, &st.rulesVersion, sqlRulesVersion},
	} {
		stmt, err := p.db.PrepareContext(ctx, p.query)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", firstWords(p.query), err)
		}
		*p.dst = stmt
		st.all = append(st.all, stmt)
	}
	st.claims = map[string]*sql.Stmt{}
	for _, l := range []leased{notificationLease, slackLease, deliveryLease} {
		stmt, err := w.PrepareContext(ctx, l.claimSQL())
		if err != nil {
			return fmt.Errorf("prepare the claim of %s: %w", l.table, err)
		}
		st.claims[l.table] = stmt
		st.all = append(st.all, stmt)
	}
	return nil
}

// close closes every prepared statement.
func (st *statements) close() error {
	var errs []error
	for _, stmt := range st.all {
		errs = append(errs, stmt.Close())
	}
	st.all = nil
	return errors.Join(errs...)
}

// firstWords shortens a query for an error message.
func firstWords(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if len(q) > 60 {
		q = q[:60] + "…"
	}
	return q
}
