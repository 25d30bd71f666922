package bench

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"github.com/hitl-sh/hitl/sqlite"
)

// rowsLoop is the pushed loop's store with hitl's own record of each
// question: hitl's SQLite schema (made by hitl's migrations, with every
// index, constraint and trigger), a question written as hitl writes the
// bench's questions (its interaction row, with the same columns filled,
// and its created event) and an answer as hitl records one (a
// compare-and-set update of the row from pending to answered, and its
// answered event), with hitl's connection settings (foreign keys on) and
// prepared statements, through the same group commit as sqliteLoop.
//
// Beside the pushed loop it shows what hitl's durable record of a
// question costs; beside hitl, what hitl's server does besides writing
// that record: its API, validation, authorization, events to the inbox,
// logging.
type rowsLoop struct {
	*sqliteLoop
	insert, event, answered *sql.Stmt
}

// The statements of hitl's record that the loop writes; the rest of the
// row keeps its columns' defaults, as it does in hitl for these questions.
const (
	rowsInsert = `INSERT INTO interactions (id, type, question, options, timeout, deadline, on_timeout,
		source_agent, created_by, created_via, created_at, request_hash, status)
		VALUES (?, 'approval', ?, '[{"key":"approve","label":"Approve"},{"key":"reject","label":"Reject"}]',
		3600, ?, 'cancel', ?, 'local', 'api', ?, ?, 'pending')`
	rowsEvent    = `INSERT INTO events (type, interaction_id, at, actor, channel) VALUES (?, ?, ?, 'local', 'api')`
	rowsAnswered = `UPDATE interactions SET status = 'answered', result_value = 'true', responded_by = 'local',
		result_channel = 'api', responded_at = ? WHERE id = ? AND status = 'pending'`
)

// openRowsLoop makes hitl's schema in the new file path and opens the
// loop's store on it.
func openRowsLoop(ctx context.Context, path string, release func(string)) (*rowsLoop, error) {
	db, err := openHitlSchema(path)
	if err != nil {
		return nil, err
	}
	l := &rowsLoop{sqliteLoop: startSQLiteLoop(db, release)}
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{{&l.insert, rowsInsert}, {&l.event, rowsEvent}, {&l.answered, rowsAnswered}} {
		if *p.stmt, err = db.PrepareContext(ctx, p.sql); err != nil {
			l.close()
			return nil, fmt.Errorf("prepare: %w", err)
		}
	}
	return l, nil
}

// openHitlSchema makes hitl's SQLite schema in the new file path, with
// hitl's migrations, and opens it as hitl's store's writer does (WAL,
// synchronous=FULL, foreign keys on, immediate transactions), on one
// connection.
func openHitlSchema(path string) (*sql.DB, error) {
	st, err := sqlite.Open(path, nil)
	if err != nil {
		return nil, fmt.Errorf("hitl's schema: %w", err)
	}
	if err := st.Close(); err != nil {
		return nil, fmt.Errorf("hitl's schema: %w", err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_journal_mode=WAL&_synchronous=FULL&_txlock=immediate&_busy_timeout=5000&_foreign_keys=1")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// question commits q's interaction row and its created event.
func (l *rowsLoop) question(q questionPush) error {
	now := time.Now().UnixMilli()
	sum := sha256.Sum256([]byte(q.Question))
	hash := "v2:" + hex.EncodeToString(sum[:])
	return l.write(func(tx *sql.Tx) error {
		if _, err := tx.Stmt(l.insert).Exec(q.InteractionID, q.Question, now+3600_000, q.SourceAgent, now, hash); err != nil {
			return err
		}
		_, err := tx.Stmt(l.event).Exec("created", q.InteractionID, now)
		return err
	})
}

// answer moves id's row from pending to answered, with its answered
// event, and then releases its wait.
func (l *rowsLoop) answer(id string) error {
	now := time.Now().UnixMilli()
	err := l.write(func(tx *sql.Tx) error {
		res, err := tx.Stmt(l.answered).Exec(now, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n != 1 {
			return fmt.Errorf("question %s is not pending", id)
		}
		_, err = tx.Stmt(l.event).Exec("answered", id, now)
		return err
	})
	if err != nil {
		return err
	}
	l.release(id)
	return nil
}

// startRowsLoopServer serves the pushed loop writing hitl's rows on a
// loopback port, with its database in the new SQLite file path; its ids
// are hitl's (UUIDv7), so its indexes' keys are as long as hitl's.
func startRowsLoopServer(ctx context.Context, path string) (*loopServer, error) {
	return serveLoop(func(release func(string)) (loopStore, error) { return openRowsLoop(ctx, path, release) }, loopPushed,
		func() string { return uuid.Must(uuid.NewV7()).String() })
}

// floorRowsRoundTrips is floorPushedRoundTrips with hitl's rows
// (rowsLoop).
func floorRowsRoundTrips(ctx context.Context, dir string, c int, warm, window time.Duration) (loadResult, error) {
	s, err := startRowsLoopServer(ctx, filepath.Join(dir, fmt.Sprintf("floor-load-rows-c%d.db", c)))
	return loopRoundTrips(ctx, "hitl's rows", s, err, c, warm, window, nil)
}
