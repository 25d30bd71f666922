// Package park holds long-polls without a goroutine each: the connection
// of a waiting request is taken from net/http (hijacked) and parked until
// the answer or the wait's end, when the response is written on it and
// the connection is given back to net/http, through Listener, for the
// client's next request.
package park

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/stack"
)

// Parked long-polls' timing.
const (
	// writeTimeout bounds writing a parked long-poll's response.
	writeTimeout = 10 * time.Second
	// SweepInterval is how often parked connections are checked for
	// clients that hung up, by default.
	SweepInterval = 5 * time.Second
)

// Wait is a long-poll (GET …/wait) held without a goroutine or buffers:
// its connection is taken from net/http (hijacked) while the agent waits,
// the broker calls back (Wake) when the interaction ends, a timer fires at
// the wait's end, and the response is written on the connection, which
// then goes back to the server (Listener) for the agent's next request.
//
// What it costs is the connection, this struct and a timer — about a
// tenth of a goroutine blocked in a handler. An agent that hangs up early
// is noticed by the listener's sweep (every SweepInterval, on Unix), not
// at once.
type Wait struct {
	listener *Listener

	mu      sync.Mutex // held while the wait is set up
	nc      net.Conn
	header  http.Header       // set by the middleware before the handler
	current *hitl.Interaction // as it stood when the wait began
	keep    bool              // the client keeps the connection open
	stop    func() bool
	timer   *time.Timer
	check   *Check
	recheck *time.Timer // runs check; nil without one
	done    bool
}

// Check is how a parked wait makes sure its caller may still have the
// answer: every Every it calls Holds, and once that reports false the
// wait ends with a 401 whose JSON body is Refusal.
type Check struct {
	Every   time.Duration
	Holds   func() bool
	Refusal []byte
}

// NewWait starts setting up a wait on l; keep says the client keeps its
// connection open after the response. Pass Wake to the broker
// (broker.WaitFunc), then call Park, or Forget when there is nothing to
// wait for: until then, an answer that arrives waits for the set-up.
func (l *Listener) NewWait(keep bool) *Wait {
	p := &Wait{listener: l, keep: keep}
	p.mu.Lock()
	return p
}

// Forget ends the set-up of a wait that is not parked: the interaction
// had ended, or the broker refused the wait. Wake then does nothing.
func (p *Wait) Forget() { p.mu.Unlock() }

// Park takes w's connection from net/http and holds it until Wake, or
// until d passes, when the response is current (the interaction as it
// stood when the wait began), or until check (when not nil) finds the
// caller's credentials gone. stop unregisters Wake from the broker and
// reports whether it was still registered. It ends the set-up, and on
// failure unregisters Wake and drops the connection.
func (p *Wait) Park(w http.ResponseWriter, current *hitl.Interaction, stop func() bool, d time.Duration, check *Check) error {
	defer p.mu.Unlock() // Wake's answer waits for the set-up
	p.header = w.Header().Clone()
	nc, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		stop()
		return fmt.Errorf("park a long-poll: %w", err)
	}
	// No read deadline may outlive the request (such as one bounding the
	// request body): the sweep's peek (hungUp) and the agent's next
	// request read this connection later. net/http clears deadlines when
	// it hands a connection over; this does not rely on it.
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
	// The timers, the sweep and the credential check may each end the
	// wait: only the first to call stop unregisters Wake.
	var once sync.Once
	p.current = current
	p.stop = func() (stopped bool) {
		once.Do(func() { stopped = stop() })
		return stopped
	}
	p.timer = time.AfterFunc(d, p.expire)
	if check != nil && check.Every > 0 {
		p.check = check
		p.recheck = time.AfterFunc(check.Every, p.checkCredentials)
	}
	p.listener.hold(p) // last: the sweep reads p's fields
	return nil
}

// Wake is the broker's callback: in ended (nil: the broker closed).
func (p *Wait) Wake(in *hitl.Interaction) {
	go p.finish(in)
}

// hangUp ends a wait whose agent has gone, unless an answer is on its way.
func (p *Wait) hangUp() {
	if !p.stop() {
		return // it ended just now; Wake answers (and finds the connection gone)
	}
	p.mu.Lock()
	if p.done {
		p.mu.Unlock()
		return
	}
	p.done = true
	p.stopTimers()
	p.mu.Unlock()
	_ = p.nc.Close()
	p.listener.release(p)
}

// stopTimers stops the wait's timers; p.mu is held.
func (p *Wait) stopTimers() {
	p.timer.Stop()
	if p.recheck != nil {
		p.recheck.Stop()
	}
}

// checkCredentials ends the wait with a 401 when the caller's credentials
// no longer hold, and otherwise checks again later.
func (p *Wait) checkCredentials() {
	if p.check.Holds() {
		p.mu.Lock()
		if !p.done {
			p.recheck.Reset(p.check.Every)
		}
		p.mu.Unlock()
		return
	}
	if !p.stop() {
		return // it ended just now; Wake answers
	}
	p.write(http.StatusUnauthorized, p.check.Refusal, p.keep)
}

// expire answers with the interaction as it stood, at the wait's end.
func (p *Wait) expire() {
	if !p.stop() {
		return // it ended just now; Wake answers
	}
	p.finish(p.current)
}

// finish reports in: 200 with its JSON. It runs on a goroutine of its
// own (Wake's, or the timer's), whose stack is grown at once for
// encoding in.
func (p *Wait) finish(in *hitl.Interaction) {
	stack.Grow()
	p.mu.Lock() // an answer during the set-up waits for it
	keep, current := p.keep, p.current
	p.mu.Unlock()
	if in == nil {
		// The server is shutting down: what there is, and goodbye.
		in, keep = current, false
	}
	if in == nil {
		return // never parked
	}
	// As json.Encoder would write it, without its pass over the bytes
	// MarshalJSON returns.
	body, err := in.MarshalJSON()
	if err != nil {
		body = nil
	}
	p.write(http.StatusOK, body, keep)
}

// write writes the response (status, and body, JSON; nil: drop the
// connection) once, then hands the connection back to the server, or
// closes it.
func (p *Wait) write(status int, body []byte, keep bool) {
	p.mu.Lock()
	if p.done || p.nc == nil {
		p.mu.Unlock()
		return
	}
	p.done = true
	p.stopTimers()
	p.mu.Unlock()
	defer p.listener.release(p)
	if body == nil {
		_ = p.nc.Close()
		return
	}
	resp := p.response(status, body, keep)
	if err := p.nc.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
		_ = p.nc.Close()
		return
	}
	if _, err := p.nc.Write(resp); err != nil || !keep {
		_ = p.nc.Close()
		return
	}
	_ = p.nc.SetWriteDeadline(time.Time{})
	p.listener.give(p.nc)
}

// response returns the HTTP/1.1 response with status and the JSON body,
// under the headers the middleware set, closing the connection unless
// keep.
func (p *Wait) response(status int, body []byte, keep bool) []byte {
	h := p.header
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	h.Set("Content-Length", strconv.Itoa(len(body)+1)) // and a newline, as json.Encoder ends it
	if !keep {
		h.Set("Connection", "close")
	}
	var resp bytes.Buffer
	resp.Grow(256 + len(body) + 1)
	if status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Bearer realm="hitl"`)
	}
	fmt.Fprintf(&resp, "HTTP/1.1 %d %s\r\n", status, http.StatusText(status))
	_ = h.Write(&resp)
	resp.WriteString("\r\n")
	resp.Write(body) // body may be shared (a Check's Refusal): not appended to
	resp.WriteByte('\n')
	return resp.Bytes()
}

// aheadConn is a connection whose first bytes were already read (a
// request sent behind the long-poll's, on the same connection).
type aheadConn struct {
	net.Conn
	r io.Reader
}

func (c *aheadConn) Read(p []byte) (int, error) { return c.r.Read(p) }
