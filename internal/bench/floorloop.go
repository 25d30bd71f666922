package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
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
// server must do to serve it durably, with the same HTTP server and
// database driver as hitl. A create gives out an id, a wait holds its
// request until the id is answered, and an answer commits one small row
// durably and then releases the wait. Nothing is validated, authorised
// or logged, no event is recorded but in hitl's rows (loopRows), and no
// JSON is decoded but a pushed question's (loopPushed, loopRows).
//
// Its store is a SQLite file (sqliteLoop, rowsLoop) or a PostgreSQL
// database (postgresLoop); its kind adds what hitl must do besides
// (loopKind).
type loopServer struct {
	store  loopStore
	kind   loopKind
	people people        // the person's WebSockets (loopPushed)
	next   atomic.Int64  // the last id given out
	newID  func() string // gives out a question's id; nil means the next number
	hs     *http.Server
	ln     net.Listener
	mu     sync.Mutex
	waits  map[string]chan struct{} // closed when the id is answered
}

// loopStore is where a loop server commits its rows. Each write returns
// once its row is durable; an answer's wait is released through the
// release function the store was opened with, once the answer is
// committed.
type loopStore interface {
	// question commits the question q.InteractionID (loopQuestions and
	// loopPushed; the pushed loop's q also carries its question and
	// asking agent).
	question(q questionPush) error
	// answer commits the answer to id.
	answer(id string) error
	close()
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
	// loopRows is loopPushed writing hitl's own rows (rowsLoop), not the
	// least rows a loop needs.
	loopRows
)

// startLoopServer serves the loop floor of the kind on a loopback port,
// with its database in the new SQLite file path.
func startLoopServer(ctx context.Context, path string, kind loopKind) (*loopServer, error) {
	return serveLoop(func(release func(string)) (loopStore, error) { return openSQLiteLoop(ctx, path, release) }, kind, nil)
}

// serveLoop serves the loop floor of the kind on a loopback port, on the
// store open makes, giving out the ids newID makes (nil: numbers).
func serveLoop(open func(release func(string)) (loopStore, error), kind loopKind, newID func() string) (*loopServer, error) {
	s := &loopServer{kind: kind, newID: newID, people: people{conns: map[net.Conn]struct{}{}}, waits: map[string]chan struct{}{}}
	store, err := open(s.release)
	if err != nil {
		return nil, fmt.Errorf("floor loop: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		store.close()
		return nil, fmt.Errorf("floor loop: %w", err)
	}
	s.store, s.ln = store, ln
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/interactions", s.create)
	mux.HandleFunc("GET /api/v1/interactions/{id}/wait", s.wait)
	mux.HandleFunc("POST /api/v1/interactions/{id}/respond", s.respond)
	if kind >= loopPushed {
		mux.HandleFunc("GET /ws", s.people.serve)
	}
	s.hs = &http.Server{Handler: mux}
	go func() { _ = s.hs.Serve(ln) }()
	return s, nil
}

// URL is the server's base URL.
func (s *loopServer) URL() string { return "http://" + s.ln.Addr().String() }

// nextID gives out the next question's id.
func (s *loopServer) nextID() string {
	if s.newID != nil {
		return s.newID()
	}
	return strconv.FormatInt(s.next.Add(1), 10)
}

// close stops the server and closes its database.
func (s *loopServer) close() {
	_ = s.hs.Close()
	s.people.close()
	s.store.close()
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
	if s.kind >= loopPushed {
		var err error
		if q, err = readQuestion(r); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	id := s.nextID()
	q.InteractionID = id
	if s.kind >= loopQuestions {
		if err := s.store.question(q); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	s.channel(id)
	if s.kind >= loopPushed {
		if err := s.people.push(q); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	writeLoop(w, `{"interaction_id":"`+id+`","status":"pending"}`)
}

// wait holds the request until id is answered, or for the timeout its
// query asks (in seconds, as hitl's; 30 s without one), and then says it
// is still pending, as hitl does: a driver whose question was never
// answered learns it rather than waiting for ever.
func (s *loopServer) wait(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	d := 30 * time.Second
	if secs, err := strconv.ParseFloat(r.URL.Query().Get("timeout"), 64); err == nil && secs >= 0 {
		d = time.Duration(secs * float64(time.Second))
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.channel(id):
		s.mu.Lock()
		delete(s.waits, id)
		s.mu.Unlock()
		writeLoop(w, `{"status":"answered"}`)
	case <-t.C:
		writeLoop(w, `{"status":"pending"}`)
	case <-r.Context().Done():
	}
}

func (s *loopServer) respond(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := s.store.answer(id); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if s.kind >= loopPushed {
		s.people.answered(id)
	}
	writeLoop(w, `{"status":"answered"}`)
}

// release wakes the wait on id, once its answer is committed. The closed
// channel stays until the wait takes it: under load the answer may come
// before the wait does.
func (s *loopServer) release(id string) {
	c := s.channel(id)
	s.mu.Lock()
	select {
	case <-c:
	default:
		close(c)
	}
	s.mu.Unlock()
}

// writeLoop writes a 200 JSON body.
func writeLoop(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write([]byte(body))
}
