package bench

import (
	"context"
	"database/sql"
	"errors"
)

// sqliteLoop is the loop floor's SQLite store: one file (WAL,
// synchronous=FULL), written by one committer. Writes that arrive
// together commit together, one transaction and one sync, as hitl's store
// does (without that, a loop with many agents would be slower than hitl
// and no floor).
type sqliteLoop struct {
	db      *sql.DB
	release func(id string)
	writes  chan loopWrite // to the committer
	stop    chan struct{}
	done    chan struct{} // closed when the committer has ended
}

// loopWrite is a question or an answer on its way to the committer: the
// statements it runs in the batch's transaction; err says how its commit
// went.
type loopWrite struct {
	do  func(tx *sql.Tx) error
	err chan error
}

// The loop's two writes.
const (
	insertQuestion = `INSERT INTO questions (id, v) VALUES (?, 'pending')`
	insertAnswer   = `INSERT INTO answers (id, v) VALUES (?, 'true')`
)

// openSQLiteLoop creates the loop's tables in the new file path and
// starts its committer.
func openSQLiteLoop(ctx context.Context, path string, release func(string)) (*sqliteLoop, error) {
	db, err := openFloorDB(path)
	if err != nil {
		return nil, err
	}
	for _, table := range []string{"questions", "answers"} {
		if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+table+` (id TEXT PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
			db.Close()
			return nil, err
		}
	}
	return startSQLiteLoop(db, release), nil
}

// startSQLiteLoop starts the committer of the loop's store on db.
func startSQLiteLoop(db *sql.DB, release func(string)) *sqliteLoop {
	s := &sqliteLoop{db: db, release: release, writes: make(chan loopWrite, 256), stop: make(chan struct{}), done: make(chan struct{})}
	go s.commit()
	return s
}

func (s *sqliteLoop) question(q questionPush) error {
	return s.write(func(tx *sql.Tx) error { _, err := tx.Exec(insertQuestion, q.InteractionID); return err })
}

func (s *sqliteLoop) answer(id string) error {
	if err := s.write(func(tx *sql.Tx) error { _, err := tx.Exec(insertAnswer, id); return err }); err != nil {
		return err
	}
	s.release(id)
	return nil
}

func (s *sqliteLoop) close() {
	close(s.stop)
	<-s.done
	_ = s.db.Close()
}

// commit writes what arrives, each batch of those waiting in one
// transaction, until stop is closed.
func (s *sqliteLoop) commit() {
	defer close(s.done)
	batch := make([]loopWrite, 0, 256)
	for {
		select {
		case w := <-s.writes:
			batch = append(batch[:0], w)
		case <-s.stop:
			return
		}
	more:
		for len(batch) < cap(batch) {
			select {
			case w := <-s.writes:
				batch = append(batch, w)
			default:
				break more
			}
		}
		err := s.commitBatch(batch)
		for _, w := range batch {
			w.err <- err
		}
	}
}

// commitBatch runs the batch's writes in one durable transaction.
func (s *sqliteLoop) commitBatch(batch []loopWrite) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	for _, w := range batch {
		if err := w.do(tx); err != nil {
			tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// write hands one write to the committer and waits for its commit.
func (s *sqliteLoop) write(do func(tx *sql.Tx) error) error {
	w := loopWrite{do: do, err: make(chan error, 1)}
	select {
	case s.writes <- w:
	case <-s.stop:
		return errors.New("floor loop: stopped")
	}
	return <-w.err
}
