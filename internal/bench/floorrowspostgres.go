package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hitl-sh/hitl/postgres"
)

// openPostgresRowsLoop is openPostgresLoop writing hitl's own record of
// each question, as rowsLoop does on SQLite: hitl's PostgreSQL schema
// (made by hitl's migrations in a scratch schema, dropped on close), a
// question as one statement that inserts its interaction row (with the
// columns hitl fills for the bench's questions, and hitl's idempotency
// clause) and its created event and notifies, an answer as one statement
// that moves the row from pending to answered, appends its answered event
// and notifies: each hitl's one statement for it, with the loop's payloads
// (the answer's id, not the event's number that hitl's replicas read the
// log from).
func openPostgresRowsLoop(ctx context.Context, url string, release func(string)) (*postgresLoop, error) {
	schema := fmt.Sprintf("hitl_bench_rows_%d_%d", os.Getpid(), postgresLoops.Add(1))
	drop := `DROP SCHEMA IF EXISTS ` + pgx.Identifier{schema}.Sanitize() + ` CASCADE`
	st, err := postgres.Open(ctx, url, &postgres.Options{Schema: schema})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("hitl's schema: %w", err), dropScratch(ctx, url, drop))
	}
	if err := st.Close(); err != nil {
		return nil, errors.Join(fmt.Errorf("hitl's schema: %w", err), dropScratch(ctx, url, drop))
	}
	pool, listener, err := connectPostgresLoop(ctx, url, schema)
	if err != nil {
		return nil, errors.Join(err, dropScratch(ctx, url, drop))
	}
	l := &postgresLoop{
		pool: pool, listener: listener, table: schema, release: release, done: make(chan struct{}),
		drop: drop,
		insert: `WITH ins AS (
				INSERT INTO interactions (id, type, question, options, timeout, deadline, on_timeout,
					source_agent, created_by, created_via, created_at, request_hash, status)
				VALUES ($1, 'approval', $2, '[{"key":"approve","label":"Approve"},{"key":"reject","label":"Reject"}]',
					3600, $3, 'cancel', $4, 'local', 'api', $5, $6, 'pending')
				ON CONFLICT (created_by, idempotency_key) WHERE idempotency_key <> '' DO NOTHING
				RETURNING id, created_at
			), ev AS (
				INSERT INTO events (type, interaction_id, at, actor, channel)
				SELECT 'created', id, created_at, 'local', 'api' FROM ins
				RETURNING seq
			)
			SELECT pg_notify('` + schema + `', 'created ' || seq::text) FROM ev`,
		update: `WITH up AS (
				UPDATE interactions SET status = 'answered', result_value = 'true', responded_by = 'local',
					result_channel = 'api', responded_at = $2
				WHERE id = $1 AND status = 'pending'
				RETURNING id
			), ev AS (
				INSERT INTO events (type, interaction_id, at, actor, channel)
				SELECT 'answered', id, $2, 'local', 'api' FROM up
				RETURNING interaction_id
			)
			SELECT pg_notify('` + schema + `', interaction_id) FROM ev`,
		insertArgs: func(q questionPush) []any {
			now := time.Now().Truncate(time.Millisecond)
			sum := sha256.Sum256([]byte(q.Question))
			return []any{q.InteractionID, q.Question, now.Add(time.Hour), q.SourceAgent, now, "v2:" + hex.EncodeToString(sum[:])}
		},
		updateArgs: func(id string) []any { return []any{id, time.Now().Truncate(time.Millisecond)} },
	}
	l, err = l.start(ctx, func() error {
		_, err := listener.Exec(ctx, `LISTEN `+pgx.Identifier{schema}.Sanitize())
		return err
	})
	if err != nil {
		return nil, errors.Join(err, dropScratch(ctx, url, drop))
	}
	return l, nil
}

// dropScratch runs drop, the statement that drops a loop's scratch table
// or schema, on a connection of its own: for a loop that failed to start.
func dropScratch(ctx context.Context, url, drop string) error {
	ctx = context.WithoutCancel(ctx)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, drop)
	return err
}

// startPostgresRowsLoopServer serves the pushed loop writing hitl's rows
// on PostgreSQL, with hitl's ids (UUIDv7).
func startPostgresRowsLoopServer(ctx context.Context, url string) (*loopServer, error) {
	return serveLoop(func(release func(string)) (loopStore, error) { return openPostgresRowsLoop(ctx, url, release) }, loopPushed,
		func() string { return uuid.Must(uuid.NewV7()).String() })
}

// postgresRowsFloorRoundTrips is postgresFloorRoundTrips writing hitl's
// rows.
func postgresRowsFloorRoundTrips(ctx context.Context, url string, c int, warm, window time.Duration) (loadResult, error) {
	s, err := startPostgresRowsLoopServer(ctx, url)
	return loopRoundTrips(ctx, "PostgreSQL with hitl's rows", s, err, c, warm, window, postgresCPU)
}
