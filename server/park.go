package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/prometheus/client_golang/prometheus"
)

// Parked long-polls' timing.
const (
	// parkWriteTimeout bounds writing a parked long-poll's response.
	parkWriteTimeout = 10 * time.Second
	// parkSweep is how often parked connections are checked for agents
	// that hung up.
	parkSweep = 5 * time.Second
)

// parkWait serves a wait of up to d without holding a goroutine: unless
// the interaction has already ended, the connection is taken from net/http
// and parked (parkedWait) until the answer or the timeout, then given back
// to l.
func (s *Server) parkWait(w http.ResponseWriter, r *http.Request, l *parkingListener, d time.Duration) error {
	p := &parkedWait{listener: l, keep: !r.Close}
	p.mu.Lock()
	defer p.mu.Unlock() // wake's answer waits for the set-up
	in, stop, err := s.broker.WaitFunc(r.Context(), r.PathValue("id"), p.wake)
	if stop == nil {
		if err != nil && !errors.Is(err, broker.ErrClosed) {
			return err
		}
		writeJSON(w, http.StatusOK, in)
		return nil
	}
	p.header = w.Header().Clone()
	nc, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		stop()
		return fmt.Errorf("park a long-poll: %w", err)
	}
	// No read deadline may outlive the request (such as bodyDeadline's):
	// the sweep's peek (hungUp) and the agent's next request read this
	// connection later. net/http clears deadlines when it hands a
	// connection over; this does not rely on it.
	if err := nc.SetReadDeadline(time.Time{}); err != nil {
		stop()
		_ = nc.Close()
		return nil
	}
	p.nc = nc
	if n := rw.Reader.Buffered(); n > 0 {
		// The client sent its next request already.
		ahead, _ := rw.Reader.Peek(n)
		p.nc = &aheadConn{Conn: nc, r: io.MultiReader(bytes.NewReader(bytes.Clone(ahead)), nc)}
	}
	p.current, p.stop = in, stop
	p.timer = time.AfterFunc(d, p.expire)
	l.hold(p) // last: the sweep reads p's fields
	return nil
}

// parkedWait is a long-poll (GET …/wait) held without a goroutine or
// buffers: its connection is taken from net/http (hijacked) while the
// agent waits, the broker calls back when the interaction ends, a timer
// fires at the wait's end, and the response is written on the connection,
// which then goes back to the server (parkingListener) for the agent's
// next request.
//
// What it costs is the connection, this struct and a timer — about a
// tenth of a goroutine blocked in a handler. An agent that hangs up early
// is noticed by the listener's sweep (every parkSweep, on Unix), not at
// once.
type parkedWait struct {
	listener *parkingListener

	mu      sync.Mutex // held while the wait is set up
	nc      net.Conn
	header  http.Header       // set by the middleware before the handler
	current *hitl.Interaction // as it stood when the wait began
	keep    bool              // the client keeps the connection open
	stop    func() bool
	timer   *time.Timer
	done    bool
}

// wake is the broker's callback: in ended (nil: the broker closed).
func (p *parkedWait) wake(in *hitl.Interaction) {
	go p.finish(in)
}

// hangUp ends a wait whose agent has gone, unless an answer is on its way.
func (p *parkedWait) hangUp() {
	if !p.stop() {
		return // it ended just now; wake answers (and finds the connection gone)
	}
	p.mu.Lock()
	if p.done {
		p.mu.Unlock()
		return
	}
	p.done = true
	p.timer.Stop()
	p.mu.Unlock()
	_ = p.nc.Close()
	p.listener.release(p)
}

// expire answers with the interaction as it stood, at the wait's end.
func (p *parkedWait) expire() {
	if !p.stop() {
		return // it ended just now; wake answers
	}
	p.finish(p.current)
}

// finish writes the response once, then hands the connection back to the
// server, or closes it.
func (p *parkedWait) finish(in *hitl.Interaction) {
	p.mu.Lock()
	if p.done || p.nc == nil {
		p.mu.Unlock()
		return
	}
	p.done = true
	p.timer.Stop()
	p.mu.Unlock()
	defer p.listener.release(p)
	keep := p.keep
	if in == nil {
		// The server is shutting down: what there is, and goodbye.
		in, keep = p.current, false
	}
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(in); err != nil {
		_ = p.nc.Close()
		return
	}
	h := p.header
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	h.Set("Content-Length", strconv.Itoa(body.Len()))
	if !keep {
		h.Set("Connection", "close")
	}
	var resp bytes.Buffer
	resp.Grow(256 + body.Len())
	resp.WriteString("HTTP/1.1 200 OK\r\n")
	_ = h.Write(&resp)
	resp.WriteString("\r\n")
	resp.Write(body.Bytes())
	if err := p.nc.SetWriteDeadline(time.Now().Add(parkWriteTimeout)); err != nil {
		_ = p.nc.Close()
		return
	}
	if _, err := p.nc.Write(resp.Bytes()); err != nil || !keep {
		_ = p.nc.Close()
		return
	}
	_ = p.nc.SetWriteDeadline(time.Time{})
	p.listener.give(p.nc)
}

// parkingListener is a net.Listener that also returns connections given
// back by parked long-polls, so net/http serves their next request.
type parkingListener struct {
	net.Listener
	back     chan net.Conn
	accepted chan acceptResult
	done     chan struct{}
	parked   counter          // long-polls parked and not yet answered
	gauge    prometheus.Gauge // the same, for /metrics
	every    time.Duration    // how often parked connections are looked at

	mu    sync.Mutex
	waits map[*parkedWait]struct{}
	sweep *time.Timer // runs while waits is not empty

	pumpOnce, closeOnce sync.Once
}

type acceptResult struct {
	c   net.Conn
	err error
}

func newParkingListener(l net.Listener, gauge prometheus.Gauge, every time.Duration) *parkingListener {
	return &parkingListener{
		Listener: l,
		gauge:    gauge,
		every:    every,
		waits:    make(map[*parkedWait]struct{}),
		back:     make(chan net.Conn),
		accepted: make(chan acceptResult),
		done:     make(chan struct{}),
	}
}

// Accept returns the next new or given-back connection.
func (l *parkingListener) Accept() (net.Conn, error) {
	l.pumpOnce.Do(func() { go l.pump() })
	select {
	case c := <-l.back:
		return c, nil
	case a := <-l.accepted:
		return a.c, a.err
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// pump accepts new connections for Accept until the listener closes.
func (l *parkingListener) pump() {
	for {
		c, err := l.Listener.Accept()
		select {
		case l.accepted <- acceptResult{c, err}:
		case <-l.done:
			if c != nil {
				_ = c.Close()
			}
			return
		}
		if err != nil && isClosed(err) {
			return
		}
	}
}

// hold counts p among the parked waits.
func (l *parkingListener) hold(p *parkedWait) {
	l.parked.add()
	l.gauge.Inc()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waits[p] = struct{}{}
	if l.sweep == nil {
		l.sweep = time.AfterFunc(l.every, l.sweepWaits)
	}
}

// release forgets p, answered or abandoned.
func (l *parkingListener) release(p *parkedWait) {
	l.mu.Lock()
	delete(l.waits, p)
	l.mu.Unlock()
	l.gauge.Dec()
	l.parked.done()
}

// sweepWaits ends the parked waits whose agents have hung up, so their
// connections and broker registrations do not outlive them until the
// wait's timeout (up to 300 s).
func (l *parkingListener) sweepWaits() {
	l.mu.Lock()
	ps := make([]*parkedWait, 0, len(l.waits))
	for p := range l.waits {
		ps = append(ps, p)
	}
	l.mu.Unlock()
	for _, p := range ps {
		if hungUp(p.nc) {
			p.hangUp()
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.waits) == 0 {
		l.sweep = nil
		return
	}
	l.sweep.Reset(l.every)
}

// give hands c back to be served again, or closes it when the listener is
// closed.
func (l *parkingListener) give(c net.Conn) {
	select {
	case l.back <- c:
	case <-l.done:
		_ = c.Close()
	}
}

// Close stops accepting; connections given back later are closed.
func (l *parkingListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// isClosed reports whether err says the listener is closed.
func isClosed(err error) bool { return errors.Is(err, net.ErrClosed) }

// aheadConn is a connection whose first bytes were already read (a
// request sent behind the long-poll's, on the same connection).
type aheadConn struct {
	net.Conn
	r io.Reader
}

func (c *aheadConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// counter counts things in flight and lets one wait for none.
type counter struct {
	mu   sync.Mutex
	n    int
	none chan struct{} // closed when n drops to 0
}

func (c *counter) add() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == 0 {
		c.none = make(chan struct{})
	}
	c.n++
}

func (c *counter) done() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n--
	if c.n == 0 {
		close(c.none)
	}
}

// wait waits until nothing is in flight, or ctx ends.
func (c *counter) wait(ctx context.Context) error {
	c.mu.Lock()
	none := c.none
	n := c.n
	c.mu.Unlock()
	if n == 0 {
		return nil
	}
	select {
	case <-none:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
