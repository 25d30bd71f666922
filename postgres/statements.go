package postgres

import "fmt"

// The store's SQL. pgx prepares each statement once per connection and
// caches it, so every call is one round trip. Each write is one statement
// (data-modifying CTEs), so it commits on its own or with the others of
// its group (groupcommit.go): the row change, its events and the NOTIFY
// with each event's sequence number, together.
var (
	cols = columns("")

	// createColumns are the columns a create fills, $1 to $32 in
	// createValues: $22 to $30 are the status and the result, those of a
	// pending interaction or of one created answered (whose answered event
	// sqlCreateAnswered appends in the same statement); $31 is the
	// callback URL, $32 the workflow.
	createColumns = `id, type, question, context, options, form_schema, default_response,
				timeout, deadline, on_timeout, idempotency_key, source_agent, session_id,
				metadata, targets, created_by, created_via, created_at, request_hash, notify, action,
				status, result_value, responded_by, result_channel, responded_at, timed_out, reason, args_diff, rule_id,
				callback_url, workflow`
	createValues = `$1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21,
				$22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32`
	// createInsertEnd ends a create's insert: nothing when the agent's
	// idempotency key is taken.
	createInsertEnd = `ON CONFLICT (created_by, idempotency_key) WHERE idempotency_key <> '' DO NOTHING
			RETURNING id, created_at, created_by, created_via`
	// createEvent appends the created event of what ins inserted.
	createEvent = `ev AS (
			INSERT INTO events (type, interaction_id, at, actor, channel)
			SELECT 'created', id, created_at, created_by, created_via FROM ins
			RETURNING seq, interaction_id
		)`

	sqlInteraction = `SELECT ` + cols + ` FROM interactions WHERE id = $1`

	sqlByKey = `SELECT ` + cols + ` FROM interactions
		WHERE created_by = $1 AND idempotency_key = $2 AND idempotency_key <> ''`

	// createInsert is the start of a create: the interaction's row (ins),
	// unless the agent's idempotency key is taken, and its created event
	// (ev). $1 to $32 are createColumns.
	createInsert = `WITH ins AS (
			INSERT INTO interactions (` + createColumns + `)
			VALUES (` + createValues + `)
			` + createInsertEnd + `
		), ` + createEvent

	// createInsertAtRulesVersion is createInsert while the rules' version
	// is $34, read in the statement (v): nothing is written when it is
	// not.
	createInsertAtRulesVersion = `WITH v AS (
			SELECT version = $34 AS held FROM rules_version WHERE id = 1
		), ins AS (
			INSERT INTO interactions (` + createColumns + `)
			SELECT ` + createValues + ` FROM v WHERE v.held
			` + createInsertEnd + `
		), ` + createEvent

	// sqlCreate inserts an interaction and its created event unless the
	// agent's idempotency key is taken (then it returns no row); $33 is
	// the NOTIFY channel.
	sqlCreate = createInsert + `
		SELECT seq, pg_notify($33, seq::text) FROM ev`

	// sqlCreateAtRulesVersion is sqlCreate at the rules' version $34: its
	// one row says whether the version held (if not, nothing was
	// written), then the created event's sequence number, NULL when
	// nothing was written (the version changed, or the idempotency key is
	// taken).
	sqlCreateAtRulesVersion = createInsertAtRulesVersion + `
		SELECT v.held, ev.seq, CASE WHEN ev.seq IS NOT NULL THEN pg_notify($33, ev.seq::text) END
		FROM v LEFT JOIN ev ON true`

	// sqlCreateAnswered is sqlCreate for an interaction created answered
	// (a rule's answer), with its answered event ($34 to $36: at, by,
	// via) after its created one, whose row it is made from, so that it
	// takes the later number.
	sqlCreateAnswered = createInsert + `, ` + answeredEvent(34) + `
		SELECT ev.seq, pg_notify($33, ev.seq::text), ans.seq, pg_notify($33, ans.seq::text) FROM ev, ans`

	// sqlCreateAnsweredAtRulesVersion is sqlCreateAtRulesVersion for an
	// interaction created answered, as sqlCreateAnswered ($35 to $37);
	// both events' numbers are NULL when nothing was written.
	sqlCreateAnsweredAtRulesVersion = createInsertAtRulesVersion + `, ` + answeredEvent(35) + `
		SELECT v.held, ev.seq, CASE WHEN ev.seq IS NOT NULL THEN pg_notify($33, ev.seq::text) END,
			ans.seq, CASE WHEN ans.seq IS NOT NULL THEN pg_notify($33, ans.seq::text) END
		FROM v LEFT JOIN ev ON true LEFT JOIN ans ON true`

	// sqlResolve is the compare-and-set out of pending, with its event.
	// $9 is true when the deadline must not have passed at $6 (a person's
	// answer); $10 is the event type, $11 the NOTIFY channel and $12 the
	// answer's idempotency key; $13 and $14 the result's args_diff and
	// rule_id, $15 the event's detail. No row: nothing matched.
	sqlResolve = resolveCTE(cols) + `
		SELECT ev.seq, pg_notify($11, ev.seq::text), ` + columns("up.") + ` FROM up, ev`

	// sqlResolveFrom is sqlResolve returning only the event's number, for a
	// caller that has the pending row (hitl.Transition.From).
	sqlResolveFrom = resolveCTE("id") + `
		SELECT ev.seq, pg_notify($11, ev.seq::text) FROM ev`

	// sqlAppendEvent appends an event to an existing interaction, locking
	// its row (FOR KEY SHARE, as the foreign key would) first. $7 is the
	// NOTIFY channel. No row: no such interaction.
	sqlAppendEvent = `WITH i AS (
			SELECT ` + cols + ` FROM interactions WHERE id = $1 FOR KEY SHARE
		), ev AS (
			INSERT INTO events (type, interaction_id, at, actor, channel, detail)
			SELECT $2, id, $3, $4, $5, $6 FROM i
			RETURNING seq
		)
		SELECT ev.seq, pg_notify($7, ev.seq::text), ` + columns("i.") + ` FROM i, ev`

	sqlCount = `SELECT count(*) FROM interactions WHERE status = $1`

	// sqlNextDeadline reads the first pending question in
	// interactions_pending_due's order: its deadline is the soonest, or
	// NULL when no pending question has one (dueKey puts those last).
	sqlNextDeadline = `SELECT deadline FROM interactions
		WHERE status = 'pending' ORDER BY ` + dueKey + `, id LIMIT 1`

	// sqlDue is a range of interactions_pending_due (dueKey is at most a
	// time only for a question that has a deadline); it skips rows
	// another replica is resolving right now.
	sqlDue = `SELECT ` + cols + ` FROM interactions
		WHERE status = 'pending' AND ` + dueKey + ` <= $1
		ORDER BY ` + dueKey + `, id LIMIT $2
		FOR NO KEY UPDATE SKIP LOCKED`

	// sqlEvents reads events with their interaction, if any (a rule's
	// events may have none).
	sqlEvents = `SELECT e.seq, e.type, e.interaction_id, e.at, e.actor, e.channel, e.detail, ` + joinedColumns("i.") + `
		FROM events e LEFT JOIN interactions i ON i.id = e.interaction_id
		WHERE e.seq > $1 ORDER BY e.seq LIMIT $2`

	sqlLastSeq = `SELECT coalesce(max(seq), 0) FROM events`
)

// resolveCTE is the compare-and-set out of pending (up, returning the
// columns given) and its event (ev), for sqlResolve and sqlResolveFrom.
func resolveCTE(returning string) string {
	return `WITH up AS (
			UPDATE interactions
			SET status = $2, result_value = $3, responded_by = $4, result_channel = $5,
				responded_at = $6, timed_out = $7, reason = $8, answer_key = $12, args_diff = $13, rule_id = $14
			WHERE id = $1 AND status = 'pending'
				AND (NOT $9 OR deadline IS NULL OR deadline > $6)
			RETURNING ` + returning + `
		), ev AS (
			INSERT INTO events (type, interaction_id, at, actor, channel, detail)
			SELECT $10, id, $6, $4, $5, $15 FROM up
			RETURNING seq
		)`
}

// answeredEvent is the CTE that appends the answered event (at $n, by
// $n+1, via $n+2) of the interaction whose created event ev appended.
func answeredEvent(n int) string {
	return fmt.Sprintf(`ans AS (
			INSERT INTO events (type, interaction_id, at, actor, channel)
			SELECT 'answered', interaction_id, $%d, $%d, $%d FROM ev
			RETURNING seq
		)`, n, n+1, n+2)
}
