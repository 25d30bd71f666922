package wshub

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gobwas/ws"
	"github.com/hitl-sh/hitl"
)

// Conn is one open WebSocket, as the hub sees it.
//
// It costs one goroutine (the reader, parked in a read while the client is
// quiet) and its queue of frames; writes are done by the hub's writers,
// which write the same encoded frame to every connection. At most one
// goroutine writes at a time: whoever set busy.
type Conn struct {
	hub   *Hub
	nc    net.Conn
	r     io.Reader              // nc, after any bytes read ahead during the handshake
	ctx   context.Context        // the caller and credential, for the rechecks
	cred  string                 // connections with the same cred are rechecked once
	shows func(*hitl.Event) bool // whether the client is sent an event

	// The hub's, under hub.connMu.
	start    int64     // the newest event before the connection joined
	index    int       // position in hub.conns; -1 once removed
	pingSent time.Time // when the last ping was queued
	checked  time.Time // when the credential was last checked

	heard atomic.Int64 // unix nanoseconds: the last frame from the client

	mu        sync.Mutex
	queue     net.Buffers // frames to write, in order
	busy      bool        // a goroutine writes the connection, or is about to
	replaying bool        // the replay is being written: live events wait in held
	held      []*event
	replayed  map[string]bool // interactions in the replay, until the stream passes upTo
	upTo      int64
	skip      int64         // events up to this one were sent already (a resume ahead of the feed)
	closing   bool          // a close frame is queued: nothing more is
	sent      chan struct{} // closed once the close frame is written (or the connection dropped)
	removed   bool
}

// event is an event and its frame, encoded once for every connection.
type event struct {
	ev    *hitl.Event
	frame []byte
}

// WebSocket timing and limits.
const (
	// pingInterval is how often a connection is pinged, so dead peers
	// are noticed and proxies keep the connection open.
	pingInterval = 30 * time.Second
	// writeTimeout bounds a write that could not complete at once (and
	// the wait for a pong); a client that cannot take a message in this
	// time is dropped.
	writeTimeout = 10 * time.Second
	// fastWrite is how long a hub writer waits on one connection before
	// handing it to a goroutine of its own, so a slow client never holds
	// up the others.
	fastWrite = time.Millisecond
	// closeWait is how long the server waits for the client's close
	// frame after sending its own.
	closeWait = 5 * time.Second
	// readLimit bounds one client message. Clients have nothing to say
	// yet; what they send is read and ignored.
	readLimit = 4 << 10
	// queueDefault is how many messages a connection may have waiting
	// before it is dropped as too slow. The frames are shared by every
	// connection, so one that is behind holds only references to them.
	queueDefault = 1024
)

// pingFrame is an empty ping, the same bytes for every connection.
var pingFrame = ws.MustCompileFrame(ws.NewPingFrame(nil))

// push queues ev's frame, or holds the event while the replay is written.
// It reports whether the connection needs a writer, and whether it was
// closed instead: a connection that falls limit messages behind is closed
// with 1013, and the caller must remove it from the hub.
func (c *Conn) push(e *event, limit int) (schedule, closed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return false, false
	}
	if c.replaying {
		if len(c.held) >= limit {
			return c.closeLocked(statusTryAgainLater, ReasonSlow, true), true
		}
		c.held = append(c.held, e)
		return false, false
	}
	if e.ev.Seq <= c.skip || c.repeatLocked(e.ev) {
		return false, false
	}
	if len(c.queue) >= limit {
		return c.closeLocked(statusTryAgainLater, ReasonSlow, true), true
	}
	c.queue = append(c.queue, e.frame)
	return c.claimLocked(), false
}

// repeatLocked reports whether ev is the created event of an interaction
// the replay already sent. The replayed set goes once the stream passes
// the log position read after the replay, so it is not held for the
// connection's life (one entry per pending interaction).
func (c *Conn) repeatLocked(ev *hitl.Event) bool {
	if c.replayed == nil {
		return false
	}
	repeat := ev.Type == hitl.EventCreated && c.replayed[ev.InteractionID]
	if ev.Seq >= c.upTo {
		c.replayed = nil
	}
	return repeat
}

// send queues a control frame (a ping or a pong) and reports whether the
// connection needs a writer.
func (c *Conn) send(frame []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return false
	}
	c.queue = append(c.queue, frame)
	return c.claimLocked()
}

// close queues a close frame with code and reason, after what is queued
// or instead of it (drop), takes the connection out of the hub (it gets
// no more events) and reports whether it needs a writer. The client
// answers with its own close frame, and the reader then closes the
// connection (or after closeWait).
func (c *Conn) close(code ws.StatusCode, reason string, drop bool) bool {
	c.mu.Lock()
	claimed := c.closeLocked(code, reason, drop)
	c.mu.Unlock()
	c.hub.remove(c)
	return claimed
}

func (c *Conn) closeLocked(code ws.StatusCode, reason string, drop bool) bool {
	if c.closing {
		return false
	}
	c.closing = true
	c.sent = make(chan struct{})
	c.held = nil
	if drop {
		c.queue = c.queue[:0]
	}
	c.queue = append(c.queue, ws.MustCompileFrame(ws.NewCloseFrame(ws.NewCloseFrameBody(code, reason))))
	return c.claimLocked()
}

// claimLocked marks the connection busy and reports whether it was idle,
// in which case the caller must see that it is written (hub.schedule).
func (c *Conn) claimLocked() bool {
	if c.busy {
		return false
	}
	c.busy = true
	return true
}

// flush writes the queue until it is empty, by the goroutine that set
// busy. A write that cannot complete within fastWrite is finished on a
// goroutine of the connection's own, within writeTimeout (fast false is
// that goroutine), so a slow client never holds up a hub writer.
func (c *Conn) flush(fast bool) {
	for {
		c.mu.Lock()
		bufs, closing := c.queue, c.closing
		c.queue = nil
		if len(bufs) == 0 {
			c.busy = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		if !c.write(bufs, closing, fast) {
			return
		}
	}
}

// write writes bufs, taken from the queue, and reports whether the caller
// should go on flushing. closing says a close frame ends bufs.
func (c *Conn) write(bufs net.Buffers, closing, fast bool) bool {
	var (
		done bool
		err  error
	)
	if fast {
		done, err = writeNow(c.nc, &bufs)
	} else {
		done, err = writeWithin(c.nc, &bufs, writeTimeout)
	}
	switch {
	case err != nil, !done && !fast:
		c.Drop()
		return false
	case !done:
		// The socket is full. bufs holds what is left, maybe half a
		// frame: only this connection's own goroutine writes it, and
		// then the queue.
		go func() {
			if c.write(bufs, closing, false) {
				c.flush(false)
			}
		}()
		return false
	}
	if closing {
		// The reader waits for the client's answer, for a while.
		_ = c.nc.SetReadDeadline(time.Now().Add(closeWait))
		c.mu.Lock()
		c.closeSentLocked()
		c.mu.Unlock()
	}
	return true
}

// writeWithin writes bufs within d, and removes what was written from
// bufs. It reports whether all was written; false with a nil error means
// d passed first. The deadline is cleared again once the write is done: a
// deadline left behind would fail every later write on the connection
// once it passed, the hub's deadline-free writeNow included.
func writeWithin(nc net.Conn, bufs *net.Buffers, d time.Duration) (bool, error) {
	if err := nc.SetWriteDeadline(time.Now().Add(d)); err != nil {
		return false, err
	}
	_, err := bufs.WriteTo(nc)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := nc.SetWriteDeadline(time.Time{}); err != nil {
		return false, err
	}
	return true, nil
}

// consume removes the first n bytes from bufs.
func consume(bufs *net.Buffers, n int) {
	for len(*bufs) > 0 && n > 0 {
		b := (*bufs)[0]
		if n < len(b) {
			(*bufs)[0] = b[n:]
			return
		}
		n -= len(b)
		*bufs = (*bufs)[1:]
	}
}

// Drop closes the connection at once, without a close handshake, and
// removes it from the hub. The reader's read then fails and it returns.
func (c *Conn) Drop() {
	c.mu.Lock()
	removed := c.removed
	c.removed = true
	c.closing = true
	c.queue, c.held = nil, nil
	c.closeSentLocked()
	c.mu.Unlock()
	if removed {
		return
	}
	c.hub.remove(c) // first: whoever sees the connection end sees it gone
	_ = c.nc.Close()
}

// closeSentLocked records that no close frame is left to write.
func (c *Conn) closeSentLocked() {
	if c.sent != nil {
		select {
		case <-c.sent:
		default:
			close(c.sent)
		}
	}
}

// read reads the client's frames until the connection ends: it answers
// pings, finishes close handshakes and discards messages, closing with
// 1009 when one is too big and 1002 on a protocol error.
func (c *Conn) read() {
	defer c.Drop()
	var (
		hdr     [ws.MaxHeaderSize - 2]byte
		control [ws.MaxControlFramePayloadSize]byte
		state   = ws.StateServerSide
		message int64 // bytes of the message being received
	)
	for {
		h, err := ws.ReadHeaderBuffer(c.r, hdr[:])
		if err != nil {
			return
		}
		c.heard.Store(time.Now().UnixNano())
		if err := ws.CheckHeader(h, state); err != nil {
			// The framing can no longer be trusted: say why, and go.
			c.schedule(c.close(ws.StatusProtocolError, err.Error(), true))
			c.awaitSent()
			return
		}
		if !h.OpCode.IsControl() {
			// A message: counted against the limit and discarded. One
			// too big is refused, and the rest of it read until the
			// client answers the close (or closeWait passes).
			message += h.Length
			if message > readLimit {
				c.schedule(c.close(ws.StatusMessageTooBig, "", true))
			}
			if _, err := io.CopyN(io.Discard, c.r, h.Length); err != nil {
				return
			}
			if h.Fin {
				message = 0
				state = state.Clear(ws.StateFragmented)
			} else {
				state = state.Set(ws.StateFragmented)
			}
			continue
		}
		p := control[:h.Length]
		if _, err := io.ReadFull(c.r, p); err != nil {
			return
		}
		ws.Cipher(p, h.Mask, 0)
		switch h.OpCode {
		case ws.OpPing:
			c.schedule(c.send(ws.MustCompileFrame(ws.NewPongFrame(p))))
		case ws.OpClose:
			// The client's close, or its answer to ours: answer it unless
			// ours went first, then close the connection.
			code, _ := ws.ParseCloseFrameData(p)
			if code.Empty() || ws.CheckCloseFrameData(code, "") != nil {
				code = ws.StatusNormalClosure
			}
			c.schedule(c.close(code, "", true))
			c.awaitSent()
			return
		}
	}
}

// awaitSent waits until the queued close frame is written, or the
// connection dropped, for at most writeTimeout.
func (c *Conn) awaitSent() {
	c.mu.Lock()
	sent := c.sent
	c.mu.Unlock()
	if sent == nil {
		return
	}
	t := time.NewTimer(writeTimeout)
	defer t.Stop()
	select {
	case <-sent:
	case <-t.C:
	}
}

// schedule hands the connection to the hub's writers when needed.
func (c *Conn) schedule(needed bool) {
	if needed {
		c.hub.schedule(false, c)
	}
}
