package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/gobwas/ws"
)

// people is the pushed loop's side of the person: the WebSockets open on
// the loop server (GET /ws, with the WebSocket library hitl's hub uses),
// to which each question is written once it is committed. A WebSocket
// that opens is first sent the questions not yet answered, as hitl
// replays them: the person's may open (or reopen, after a drop) after a
// question was pushed, and a question no one sees is never answered.
type people struct {
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	pending map[string][]byte // the frames of the questions not yet answered, by id
}

// serve upgrades the request to a WebSocket and holds it until the
// person hangs up or the server closes.
func (p *people) serve(w http.ResponseWriter, r *http.Request) {
	conn, rw, _, err := ws.UpgradeHTTP(r, w)
	if err != nil {
		return // UpgradeHTTP answered with the error
	}
	p.mu.Lock()
	if p.conns == nil {
		p.mu.Unlock()
		conn.Close() // closed
		return
	}
	for _, frame := range p.pending {
		if !p.send(conn, frame) {
			break
		}
	}
	p.conns[conn] = struct{}{}
	p.mu.Unlock()
	go p.read(conn, rw.Reader)
}

// send writes frame to conn, holding p.mu; a connection that cannot take
// it is closed (its reader removes it) and send reports false.
func (p *people) send(conn net.Conn, frame []byte) bool {
	_ = conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write(frame); err != nil {
		conn.Close()
		return false
	}
	return true
}

// read reads what the person sends, and drops it, until the connection
// ends; the person only reads.
func (p *people) read(conn net.Conn, br *bufio.Reader) {
	for {
		h, err := ws.ReadHeader(br)
		if err != nil || h.OpCode == ws.OpClose {
			break
		}
		if _, err := io.CopyN(io.Discard, br, h.Length); err != nil {
			break
		}
	}
	p.mu.Lock()
	delete(p.conns, conn)
	p.mu.Unlock()
	conn.Close()
}

// questionPush is the least of a hitl:question message a person needs
// to see the question and answer it (hitl's carries the whole
// interaction).
type questionPush struct {
	Type          string `json:"type"`
	InteractionID string `json:"interaction_id"`
	SourceAgent   string `json:"source_agent"`
	Question      string `json:"question"`
}

// push writes the question to every person's WebSocket, one frame each;
// a connection that cannot take it is dropped.
func (p *people) push(q questionPush) error {
	msg, err := json.Marshal(q)
	if err != nil {
		return err
	}
	frame, err := ws.CompileFrame(ws.NewTextFrame(msg))
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending == nil {
		p.pending = map[string][]byte{}
	}
	p.pending[q.InteractionID] = frame
	for conn := range p.conns {
		p.send(conn, frame)
	}
	return nil
}

// answered forgets the question id: a WebSocket that opens from now on is
// not sent it.
func (p *people) answered(id string) {
	p.mu.Lock()
	delete(p.pending, id)
	p.mu.Unlock()
}

// close closes every person's WebSocket and refuses new ones.
func (p *people) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for conn := range p.conns {
		conn.Close()
	}
	p.conns = nil
}

// readQuestion reads what the pushed loop shows the person of a create's
// body: its question and asking agent.
func readQuestion(r *http.Request) (questionPush, error) {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, 1<<20))
	if err != nil {
		return questionPush{}, err
	}
	var q questionPush
	if err := json.Unmarshal(body, &q); err != nil {
		return questionPush{}, err
	}
	q.Type = "hitl:question"
	return q, nil
}

// floorPushedRoundTrips runs c agents and one person against the pushed
// loop (loopPushed: each question committed, then pushed to the person's
// WebSocket, each answer committed, then the wait released), in this
// process with its database in dir, with the very driver the load runs of
// hitl use (roundTrips): the person answers what arrives on its
// WebSocket. It is the least a server can do for hitl's loop as a person
// lives it. The CPU it reports is this process's, server and driver.
func floorPushedRoundTrips(ctx context.Context, dir string, c int, warm, window time.Duration) (loadResult, error) {
	s, err := startLoopServer(ctx, filepath.Join(dir, fmt.Sprintf("floor-load-pushed-c%d.db", c)), loopPushed)
	return loopRoundTrips(ctx, "pushed", s, err, c, warm, window, nil)
}

// loopRoundTrips runs c agents and one person against the loop server s
// (started, unless err says why not) with the driver of hitl's load runs,
// reading the database's CPU with dbCPU when it is not nil, and closes
// s. No wake-up may be lost.
func loopRoundTrips(ctx context.Context, what string, s *loopServer, err error, c int, warm, window time.Duration, dbCPU func() (time.Duration, bool)) (loadResult, error) {
	if err != nil {
		return loadResult{}, err
	}
	defer s.close()
	lr, err := roundTrips(ctx, []*Server{{URL: s.URL()}}, c, warm, window, dbCPU)
	if err != nil {
		return loadResult{}, fmt.Errorf("floor, %s: %w", what, err)
	}
	if lr.Lost > 0 {
		return loadResult{}, fmt.Errorf("floor, %s: %d wake-ups lost", what, lr.Lost)
	}
	return lr, nil
}
