package bench

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// hookRecord writes hitl's own record of a tool call a rule allowed, as
// the HTTP hook's floor on /rows: in hitl's SQLite schema (made by hitl's
// migrations), one durable transaction with the interaction row, created
// answered with the columns hitl fills for Claude Code's call (an action,
// its context, metadata, session, idempotency key, the rule's answer) and
// its created and answered events, through prepared statements. Beside
// the floor that commits one narrow row it shows what hitl's record of a
// decision costs; beside the HTTP hook, what hitl does besides.
type hookRecord struct {
	db                       *sql.DB
	insert, created, decided *sql.Stmt
}

// The record's statements, with the values of Claude Code's call to
// Bash that the hooks phase makes (the same lengths; ids are fresh).
const (
	hookRecordInsert = `INSERT INTO interactions (id, type, question, context, options, timeout, deadline, on_timeout,
		idempotency_key, source_agent, session_id, metadata, created_by, created_via, created_at, request_hash,
		status, result_value, responded_by, result_channel, responded_at, action, rule_id)
		VALUES (?, 'action', 'Run Bash?',
		'Claude Code asks to run **Bash** in ` + "`/work`" + `. (session ` + "`00000000-0000-0000-0000-000000000000`" + `, permission mode ` + "`default`" + `, asked by its PreToolUse hook)',
		'[]', 540, ?, 'cancel', ?, 'claude-code', '00000000-0000-0000-0000-000000000000',
		'{"cwd":"/work","permission_mode":"default","tool_use_id":"toolu_00000","via":"PreToolUse hook"}',
		'local', 'api', ?, 'v2:e02e683ac56b408a0d8f424616a878248b8ce7d6df99b2153ab5c55d277c0839',
		'answered', '{"decision":"approve"}', 'rule:01a24c19-2e77-7df7-8e3a-5fd5ec9a0afa', 'rule', ?,
		'{"action":{"name":"Bash","args":{"command":"git status","description":"Show the working tree status"},"description":"Show the working tree status","kind":"shell","input":{"command":"git status","cwd":"/work"}},"decisions":["approve","edit","reject","respond"],"reject_requires_message":false}',
		'01a24c19-2e77-7df7-8e3a-5fd5ec9a0afa')`
	hookRecordCreated = `INSERT INTO events (type, interaction_id, at, actor, channel) VALUES ('created', ?, ?, 'local', 'api')`
	hookRecordDecided = `INSERT INTO events (type, interaction_id, at, actor, channel)
		VALUES ('answered', ?, ?, 'rule:01a24c19-2e77-7df7-8e3a-5fd5ec9a0afa', 'rule')`
)

// openHookRecord makes hitl's schema in the new file path and prepares
// the record's statements, with hitl's connection settings.
func openHookRecord(path string) (*hookRecord, error) {
	db, err := openHitlSchema(path)
	if err != nil {
		return nil, err
	}
	h := &hookRecord{db: db}
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{{&h.insert, hookRecordInsert}, {&h.created, hookRecordCreated}, {&h.decided, hookRecordDecided}} {
		if *p.stmt, err = db.Prepare(p.sql); err != nil {
			db.Close()
			return nil, fmt.Errorf("prepare: %w", err)
		}
	}
	return h, nil
}

// write commits one call's record durably.
func (h *hookRecord) write(ctx context.Context) error {
	id := uuid.Must(uuid.NewV7()).String()
	now := time.Now().UnixMilli()
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Stmt(h.insert).ExecContext(ctx, id, now+540_000, "claude-code:00000000-0000-0000-0000-000000000000:"+id, now, now); err != nil {
		return err
	}
	if _, err := tx.Stmt(h.created).ExecContext(ctx, id, now); err != nil {
		return err
	}
	if _, err := tx.Stmt(h.decided).ExecContext(ctx, id, now); err != nil {
		return err
	}
	return tx.Commit()
}

// close closes the record's database.
func (h *hookRecord) close() { h.db.Close() }
