package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// postgresLoop is the loop floor's PostgreSQL store: the least statements
// a durable answer loop needs on a database that several replicas share.
// A question is one INSERT; an answer is one compare-and-set UPDATE (only a
// pending question takes it, as exactly one answer must win) whose
// pg_notify, delivered at its commit, is what releases the wait — on any
// replica; here on the loop's one listening connection, as on each of
// hitl's replicas. Each write is one statement, one round trip and one
// commit, prepared once per connection (pgx caches them), through a pool
// the size of hitl's, with the server's commit settings.
type postgresLoop struct {
	pool     *pgxpool.Pool
	listener *pgx.Conn
	table    string // the scratch table, or schema (hitl's rows)
	drop     string // the statement that drops the scratch table or schema, on close
	insert   string
	update   string
	// insertArgs and updateArgs are the arguments of a question's insert
	// and an answer's update; nil: the id alone.
	insertArgs func(q questionPush) []any
	updateArgs func(id string) []any
	release    func(id string)
	cancel     context.CancelFunc
	done       chan struct{} // closed when the listener has ended
	err        atomic.Pointer[error]
}

// postgresLoops numbers the scratch tables of one process.
var postgresLoops atomic.Int64

// openPostgresLoop creates the loop's scratch table on the database at
// url, and starts listening to its channel.
func openPostgresLoop(ctx context.Context, url string, release func(string)) (*postgresLoop, error) {
	pool, listener, err := connectPostgresLoop(ctx, url, "")
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("hitl_bench_loop_%d_%d", os.Getpid(), postgresLoops.Add(1))
	l := &postgresLoop{
		pool: pool, listener: listener, table: name, drop: `DROP TABLE IF EXISTS ` + name, release: release, done: make(chan struct{}),
		insert: `INSERT INTO ` + name + ` (id, status) VALUES ($1, 'pending')`,
		update: `WITH a AS (UPDATE ` + name + ` SET status = 'answered', answer = 'true' WHERE id = $1 AND status = 'pending' RETURNING id)
			SELECT pg_notify('` + name + `', id) FROM a`,
	}
	setup := func() error {
		if err := ensureSchema(ctx, listener); err != nil {
			return err
		}
		if _, err := listener.Exec(ctx, `CREATE TABLE `+name+` (id text PRIMARY KEY, status text NOT NULL, answer text)`); err != nil {
			return err
		}
		_, err := listener.Exec(ctx, `LISTEN `+name)
		return err
	}
	return l.start(ctx, setup)
}

// connectPostgresLoop opens a loop's pool (the size of hitl's) and its
// listening connection on the database at url, in schema when it is not
// "".
func connectPostgresLoop(ctx context.Context, url, schema string) (*pgxpool.Pool, *pgx.Conn, error) {
	pcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, nil, err
	}
	if schema != "" {
		pcfg.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{schema}.Sanitize()
	}
	pcfg.MaxConns = int32(max(4, runtime.GOMAXPROCS(0)))
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, nil, err
	}
	listener, err := pgx.ConnectConfig(ctx, pcfg.ConnConfig.Copy())
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	return pool, listener, nil
}

// start runs setup on the listening connection and then listens, or
// closes the loop's connections when setup fails.
func (l *postgresLoop) start(ctx context.Context, setup func() error) (*postgresLoop, error) {
	pool, listener := l.pool, l.listener
	if err := setup(); err != nil {
		listener.Close(context.WithoutCancel(ctx))
		pool.Close()
		return nil, err
	}
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l.cancel = cancel
	go l.listen(lctx)
	return l, nil
}

// listen releases the wait of each answer notified, until ctx ends. A
// notification whose payload begins with "created " tells of a new
// question (to other replicas, which the loop has none of) and releases
// nothing.
func (l *postgresLoop) listen(ctx context.Context) {
	defer close(l.done)
	for {
		n, err := l.listener.WaitForNotification(ctx)
		if err != nil {
			if ctx.Err() == nil {
				l.err.Store(&err)
			}
			return
		}
		if !strings.HasPrefix(n.Payload, "created ") {
			l.release(n.Payload)
		}
	}
}

func (l *postgresLoop) question(q questionPush) error {
	args := []any{q.InteractionID}
	if l.insertArgs != nil {
		args = l.insertArgs(q)
	}
	_, err := l.pool.Exec(context.Background(), l.insert, args...)
	return err
}

func (l *postgresLoop) answer(id string) error {
	if p := l.err.Load(); p != nil {
		return fmt.Errorf("the listening connection failed: %w", *p)
	}
	args := []any{id}
	if l.updateArgs != nil {
		args = l.updateArgs(id)
	}
	rows, err := l.pool.Query(context.Background(), l.update, args...)
	if err != nil {
		return err
	}
	n := 0
	for rows.Next() {
		n++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("question %s is not pending", id)
	}
	return nil
}

func (l *postgresLoop) close() {
	l.cancel()
	<-l.done
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := l.listener.Exec(ctx, l.drop)
	_ = l.listener.Close(ctx)
	l.pool.Close()
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(os.Stderr, "floor loop: %s: %v\n", l.drop, err)
	}
}

// startPostgresLoopServer serves the loop floor of the kind on a loopback
// port, on the PostgreSQL database at url. Its answers update the stored
// question, so every kind it serves stores them: loopQuestions or
// loopPushed.
func startPostgresLoopServer(ctx context.Context, url string, kind loopKind) (*loopServer, error) {
	if kind < loopQuestions {
		return nil, errors.New("floor loop: the PostgreSQL loop stores its questions")
	}
	return serveLoop(func(release func(string)) (loopStore, error) { return openPostgresLoop(ctx, url, release) }, kind, nil)
}

// postgresFloorRoundTrips runs c agents and one person against the pushed
// loop on PostgreSQL (each question inserted, then pushed to the person's
// WebSocket; each answer a compare-and-set update whose notification
// releases the wait), with the driver of hitl's load runs (roundTrips),
// reading the database's CPU: hitl's round trips on PostgreSQL are
// compared with it.
func postgresFloorRoundTrips(ctx context.Context, url string, c int, warm, window time.Duration) (loadResult, error) {
	s, err := startPostgresLoopServer(ctx, url, loopPushed)
	return loopRoundTrips(ctx, "PostgreSQL", s, err, c, warm, window, postgresCPU)
}

// postgresFloorLoop measures the answer → unblock loop of unblock, n
// samples, against the PostgreSQL loop.
func postgresFloorLoop(ctx context.Context, url string, n int, progress func(string, ...any)) (dist, error) {
	s, err := startPostgresLoopServer(ctx, url, loopQuestions)
	if err != nil {
		return dist{}, err
	}
	defer s.close()
	d, lost, err := unblock(ctx, &Server{URL: s.URL()}, n, progress)
	if err == nil && lost > 0 {
		err = fmt.Errorf("%d of its waits were not released", lost)
	}
	if err != nil {
		return dist{}, fmt.Errorf("floor loop, PostgreSQL: %w", err)
	}
	return d, nil
}
