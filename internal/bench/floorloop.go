package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
)

// floorLoop measures the answer → unblock loop of unblock, n samples,
// against a loopServer in this process with its database in dir.
func floorLoop(ctx context.Context, dir string, n int, progress func(string, ...any)) (dist, error) {
	s, err := startLoopServer(ctx, filepath.Join(dir, "floor-loop.db"), loopAnswers)
	if err != nil {
		return dist{}, err
	}
	defer s.close()
	d, lost, err := unblock(ctx, &Server{URL: s.URL()}, n, progress)
	if err == nil && lost > 0 {
		err = fmt.Errorf("%d of its waits were not released", lost)
	}
	if err != nil {
		return dist{}, fmt.Errorf("floor loop: %w", err)
	}
	return d, nil
}

// loopServer is the floor of the answer → unblock loop: the least any
// server must do to serve it durably, with the same HTTP server and SQLite
// driver as hitl. A create gives out an id, a wait holds its request until
// the id is answered, and an answer commits one small row durably (WAL,
// synchronous=FULL) and then releases the wait. Writes that arrive
// together commit together, one transaction and one sync, as hitl's store
// does (without that, a loop with many agents would be slower than hitl
// and no floor). Nothing is validated, authorised, logged or recorded as
// an event, and no JSON is decoded but a pushed question's (loopPushed).
//
// Its kind adds what hitl must do besides (loopKind).
type loopServer struct {
	db     *sql.DB
	kind   loopKind
	people people       // the person's WebSockets (loopPushed)
	next   atomic.Int64 // the last id given out
	hs     *http.Server
	ln     net.Listener
	mu     sync.Mutex
	waits  map[string]chan struct{} // closed when the id is answered
	writes chan loopWrite           // to the committer
	stop   chan struct{}
	done   chan struct{} // closed when the committer has ended
}

// loopKind is what the loop does besides committing each answer and
// then releasing its wait.
type loopKind int

const (
	// loopAnswers gives out a question's id without storing it.
	loopAnswers loopKind = iota
	// loopQuestions also commits each question before it gives out its
	// id, as a server must for the question to outlive a crash once its
	// id is out (hitl does): two commits to wait for per round trip.
	loopQuestions
	// loopPushed also reads each question from its body and, once it is
	// committed, pushes it to the person's WebSockets (GET /ws), as hitl
	// does: the person learns of it there, not from the agent.
	loopPushed
)

// loopWrite is a question or an answer on its way to the committer; err
// says how its commit went.
type loopWrite struct {
	insert string // the statement, with the id as its one parameter
	id     string
	err    chan error
}

// The loop's two writes.
const (
	insertQuestion = `INSERT INTO questions (id, v) VALUES (?, 'pending')`
	insertAnswer   = `INSERT INTO answers (id, v) VALUES (?, 'true')`
)

// commit writes what arrives, each batch of those waiting in one
// transaction, until stop is closed.
func (s *loopServer) commit() {
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

// commitBatch inserts the batch's rows in one durable transaction.
func (s *loopServer) commitBatch(batch []loopWrite) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	for _, w := range batch {
		if _, err := tx.Exec(w.insert, w.id); err != nil {
			tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// write hands one row to the committer and waits for its commit.
func (s *loopServer) write(insert, id string) error {
	w := loopWrite{insert: insert, id: id, err: make(chan error, 1)}
	select {
	case s.writes <- w:
	case <-s.stop:
		return errors.New("floor loop: stopped")
	}
	return <-w.err
}

// startLoopServer serves the loop floor of the kind on a loopback port,
// with its database in the new file path.
func startLoopServer(ctx context.Context, path string, kind loopKind) (*loopServer, error) {
	db, err := openFloorDB(path)
	if err != nil {
		return nil, fmt.Errorf("floor loop: %w", err)
	}
	for _, table := range []string{"questions", "answers"} {
		if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+table+` (id TEXT PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
			db.Close()
			return nil, fmt.Errorf("floor loop: %w", err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("floor loop: %w", err)
	}
	s := &loopServer{db: db, kind: kind, people: people{conns: map[net.Conn]struct{}{}}, ln: ln, waits: map[string]chan struct{}{},
		writes: make(chan loopWrite, 256), stop: make(chan struct{}), done: make(chan struct{})}
	go s.commit()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/interactions", s.create)
	mux.HandleFunc("GET /api/v1/interactions/{id}/wait", s.wait)
	mux.HandleFunc("POST /api/v1/interactions/{id}/respond", s.respond)
	if kind == loopPushed {
		mux.HandleFunc("GET /ws", s.people.serve)
	}
	s.hs = &http.Server{Handler: mux}
	go func() { _ = s.hs.Serve(ln) }()
	return s, nil
}

// URL is the server's base URL.
func (s *loopServer) URL() string { return "http://" + s.ln.Addr().String() }

// close stops the server and closes its database.
func (s *loopServer) close() {
	_ = s.hs.Close()
	s.people.close()
	close(s.stop)
	<-s.done
	_ = s.db.Close()
}

// channel returns the id's wake-up channel.
func (s *loopServer) channel(id string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.waits[id]
	if !ok {
		c = make(chan struct{})
		s.waits[id] = c
	}
	return c
}

func (s *loopServer) create(w http.ResponseWriter, r *http.Request) {
	var q questionPush
	if s.kind == loopPushed {
		var err error
		if q, err = readQuestion(r); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	id := strconv.FormatInt(s.next.Add(1), 10)
	if s.kind >= loopQuestions {
		if err := s.write(insertQuestion, id); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	s.channel(id)
	if s.kind == loopPushed {
		q.InteractionID = id
		if err := s.people.push(q); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	writeLoop(w, `{"interaction_id":"`+id+`","status":"pending"}`)
}

func (s *loopServer) wait(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	select {
	case <-s.channel(id):
		s.mu.Lock()
		delete(s.waits, id)
		s.mu.Unlock()
		writeLoop(w, `{"status":"answered"}`)
	case <-r.Context().Done():
	}
}

func (s *loopServer) respond(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := s.write(insertAnswer, id); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	// The closed channel stays until the wait takes it: under load the
	// answer may come before the wait does.
	c := s.channel(id)
	s.mu.Lock()
	select {
	case <-c:
	default:
		close(c)
	}
	s.mu.Unlock()
	writeLoop(w, `{"status":"answered"}`)
}

// writeLoop writes a 200 JSON body.
func writeLoop(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write([]byte(body))
}
