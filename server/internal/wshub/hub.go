// Package wshub streams events to many WebSockets at once, a few
// goroutines for all of them: the connections, their frames and queues,
// the writers, pings, credential rechecks and close handshakes (RFC 6455).
// What the messages say, and what a client is shown, is the caller's
// (an Encoder and each connection's Peer).
package wshub

import (
	"context"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gobwas/ws"
	"github.com/hitl-sh/hitl"
	"github.com/prometheus/client_golang/prometheus"
)

// Hub streams a source's events to every open WebSocket.
//
// It receives each event once (an observer of the Source, in sequence
// order),
// encodes it once as a WebSocket frame, and queues that frame on every
// connection whose caller may see it; a few writers, not a goroutine per
// connection, write the queues, several frames per system call when a
// connection has fallen behind. Nothing runs while nothing happens: the
// dispatcher and the writers are started when there is work and end with
// it, and a timer pings the connections and rechecks their credentials.
type Hub struct {
	log        *slog.Logger
	limit      int           // messages a connection may have waiting
	recheck    time.Duration // how often credentials are checked again
	stillValid func(context.Context) bool
	enc        Encoder
	gauge      prometheus.Gauge
	maxWriters int
	ping       time.Duration // how often each connection is pinged
	pongWait   time.Duration // how long a ping may go unanswered
	frames     frameCache    // pending questions' frames, for replays

	inMu        sync.Mutex
	inbox       []*hitl.Event
	last        int64 // the newest event received
	dispatching bool
	shut        bool
	count       atomic.Int64 // open connections

	connMu sync.Mutex
	conns  []*Conn
	sweep  *time.Timer
	ready  []*Conn // the dispatcher's, reused

	readyMu sync.Mutex
	queue   []*Conn // connections waiting for a writer, from head
	head    int
	writers int
}

// Source is where a hub's events come from (a *broker.Broker).
type Source interface {
	// Observe calls fn with every event from now on, in sequence order,
	// and returns the sequence number of the newest event before them.
	// fn must not block.
	Observe(fn func(*hitl.Event)) int64
	// Done is closed when the source closes: the hub then closes every
	// connection with 1001, after the events already received.
	Done() <-chan struct{}
}

// Encoder renders events as the JSON messages clients are sent.
type Encoder interface {
	// Event returns ev's messages, in order (none: clients are not told
	// about ev), and for a new question its message for replays.
	Event(ev *hitl.Event) (messages [][]byte, question []byte, err error)
	// Question returns a pending interaction's message for replays.
	Question(in *hitl.Interaction) ([]byte, error)
}

// Options configure a Hub. The zero value is usable.
type Options struct {
	// Queue is how many messages a connection may have waiting before it
	// is closed as too slow (1013, try again later); 0 means 1024.
	Queue int
	// Recheck is how often a connection's credential is checked again
	// (StillValid); 0 means every minute.
	Recheck time.Duration
	// StillValid reports whether the credential in a Peer's Ctx still
	// holds; a connection whose credential does not is closed with 1008.
	// nil means credentials never end.
	StillValid func(context.Context) bool
	// Gauge counts the open connections; nil means none.
	Gauge prometheus.Gauge
	// Logger receives errors; nil discards them.
	Logger *slog.Logger
	// Ping is how often a connection is pinged, and PongWait how long a
	// ping may go unanswered before the connection is dropped; 0 means
	// 30 s and 10 s.
	Ping, PongWait time.Duration
}

// New returns a hub streaming src's events, rendered by enc; it closes
// every connection with 1001 when src closes.
func New(src Source, enc Encoder, opts *Options) *Hub {
	if opts == nil {
		opts = &Options{}
	}
	h := &Hub{
		log: opts.Logger, limit: opts.Queue, recheck: opts.Recheck, stillValid: opts.StillValid,
		enc: enc, gauge: opts.Gauge, ping: opts.Ping, pongWait: opts.PongWait,
		// More writers than CPUs: a writer spends its time in short
		// system calls, and with a few more the sends overlap better
		// (fan-out to 9,872: median 120 ms with 2, 112 with 8, on 2 CPUs).
		maxWriters: 4 * runtime.GOMAXPROCS(0),
	}
	h.frames.enc = enc
	h.setDefaults()
	h.last = src.Observe(h.receive)
	go func() {
		<-src.Done()
		h.shutdown()
	}()
	return h
}

// setDefaults fills in what the options left out.
func (h *Hub) setDefaults() {
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.limit <= 0 {
		h.limit = queueDefault
	}
	if h.recheck <= 0 {
		h.recheck = time.Minute
	}
	if h.stillValid == nil {
		h.stillValid = func(context.Context) bool { return true }
	}
	if h.gauge == nil {
		h.gauge = prometheus.NewGauge(prometheus.GaugeOpts{Name: "websockets_open"})
	}
	if h.ping <= 0 {
		h.ping = pingInterval
	}
	if h.pongWait <= 0 {
		h.pongWait = writeTimeout
	}
}

// receive is the source's observer: it must not block.
func (h *Hub) receive(ev *hitl.Event) {
	h.inMu.Lock()
	h.last = ev.Seq
	if h.count.Load() == 0 || h.shut {
		h.inMu.Unlock()
		h.frames.observe(ev, nil) // forget what ended
		return
	}
	h.inbox = append(h.inbox, ev)
	start := !h.dispatching
	h.dispatching = true
	h.inMu.Unlock()
	if start {
		go h.dispatch()
	}
}

// add registers c, which then receives every event after c.start. It
// reports false once the hub has shut down.
func (h *Hub) add(c *Conn) bool {
	h.inMu.Lock()
	defer h.inMu.Unlock()
	if h.shut {
		return false
	}
	h.connMu.Lock()
	defer h.connMu.Unlock()
	now := time.Now()
	c.start, c.index, c.pingSent, c.checked = h.last, len(h.conns), now, now
	c.heard.Store(now.UnixNano())
	h.conns = append(h.conns, c)
	h.count.Add(1)
	h.gauge.Inc()
	if h.sweep == nil {
		h.sweep = time.AfterFunc(h.sweepInterval(), h.sweepConns)
	}
	return true
}

// remove takes c out of the hub, if it is still in.
func (h *Hub) remove(c *Conn) {
	h.connMu.Lock()
	defer h.connMu.Unlock()
	h.removeLocked(c)
}

func (h *Hub) removeLocked(c *Conn) {
	if c.index < 0 || c.index >= len(h.conns) || h.conns[c.index] != c {
		return
	}
	last := h.conns[len(h.conns)-1]
	h.conns[c.index], last.index = last, c.index
	h.conns[len(h.conns)-1] = nil
	h.conns = h.conns[:len(h.conns)-1]
	c.index = -1
	h.count.Add(-1)
	h.gauge.Dec()
}

// dispatch queues the received events on the connections, then helps
// write them. One dispatcher runs at a time; the one that finds the hub
// shut down and nothing left to deliver closes every connection with 1001,
// after what was committed before.
func (h *Hub) dispatch() {
	for {
		h.inMu.Lock()
		batch, shut := h.inbox, h.shut
		h.inbox = nil
		if len(batch) == 0 {
			h.dispatching = false
		}
		h.inMu.Unlock()
		if len(batch) == 0 {
			if shut {
				h.closeAll(ws.StatusGoingAway, ReasonShutdown)
			}
			break
		}
		h.deliver(batch)
	}
	h.connMu.Lock()
	ready := h.ready
	h.ready = h.ready[:0]
	h.schedule(true, ready...)
	h.connMu.Unlock()
	h.write()
}

// closeAll queues a close frame on every connection, after what is
// already queued, and empties the hub.
func (h *Hub) closeAll(code ws.StatusCode, reason string) {
	h.connMu.Lock()
	defer h.connMu.Unlock()
	for _, c := range h.conns {
		c.mu.Lock()
		if c.closeLocked(code, reason, false) {
			h.ready = append(h.ready, c)
		}
		c.mu.Unlock()
	}
	for len(h.conns) > 0 {
		h.removeLocked(h.conns[0])
	}
}

// deliver queues each event's frame on every connection that may see it.
// Connections too far behind are closed and leave the hub.
func (h *Hub) deliver(batch []*hitl.Event) {
	h.connMu.Lock()
	defer h.connMu.Unlock()
	var slow []*Conn
	for _, ev := range batch {
		e := h.encode(ev)
		if e == nil {
			continue
		}
		for _, c := range h.conns {
			if ev.Seq <= c.start || !c.shows(ev) {
				continue
			}
			schedule, closed := c.push(e, h.limit)
			if schedule {
				h.ready = append(h.ready, c)
			}
			if closed {
				slow = append(slow, c)
			}
		}
		for _, c := range slow {
			h.removeLocked(c)
		}
		slow = slow[:0]
	}
}

// encode returns ev's frames (one per message, back to back), or nil for an event clients are not told about. A new
// question's frame, without seq, is kept for replays.
func (h *Hub) encode(ev *hitl.Event) *event {
	msgs, question, err := h.enc.Event(ev)
	if err != nil {
		h.log.Error("websocket: encode event", "seq", ev.Seq, "error", err)
		return nil
	}
	var replayFrame []byte
	if question != nil {
		replayFrame = appendFrame(nil, question)
	}
	h.frames.observe(ev, replayFrame)
	if len(msgs) == 0 {
		return nil
	}
	size := 0
	for _, m := range msgs {
		size += len(m) + 10
	}
	frame := make([]byte, 0, size)
	for _, m := range msgs {
		frame = appendFrame(frame, m)
	}
	return &event{ev: ev, frame: frame}
}

// schedule queues connections for the writers, starting writers as
// needed; with self, the caller writes too (it calls write) and counts as
// one. Each connection must have been claimed (Conn.claimLocked).
func (h *Hub) schedule(self bool, cs ...*Conn) {
	h.readyMu.Lock()
	if self {
		h.writers++
	}
	h.queue = append(h.queue, cs...)
	start := max(0, min(h.maxWriters-h.writers, len(h.queue)-h.head))
	h.writers += start
	h.readyMu.Unlock()
	for range start {
		go h.write()
	}
}

// write writes connections' queues until no connection waits for a
// writer, as one of the writers schedule counted.
func (h *Hub) write() {
	var batch [16]*Conn
	for {
		h.readyMu.Lock()
		n := copy(batch[:], h.queue[h.head:])
		h.head += n
		if h.head == len(h.queue) {
			clear(h.queue)
			h.queue, h.head = h.queue[:0], 0
		}
		if n == 0 {
			h.writers--
			h.readyMu.Unlock()
			return
		}
		h.readyMu.Unlock()
		for _, c := range batch[:n] {
			c.flush(true)
		}
		clear(batch[:n])
	}
}

// sweepInterval is how often the connections are looked over.
func (h *Hub) sweepInterval() time.Duration {
	return min(time.Second, h.recheck, h.ping)
}

// sweepConns pings the connections due for it, drops those whose last
// ping went unanswered, and closes with 1008 those whose credentials no
// longer hold (checked once per credential).
func (h *Hub) sweepConns() {
	now := time.Now()
	var (
		dead, ping []*Conn
		due        map[string][]*Conn
	)
	h.connMu.Lock()
	for _, c := range h.conns {
		if c.heard.Load() < c.pingSent.UnixNano() {
			if now.Sub(c.pingSent) > h.pongWait {
				dead = append(dead, c)
				continue
			}
		} else if now.Sub(c.pingSent) >= h.ping {
			c.pingSent = now
			ping = append(ping, c)
		}
		if now.Sub(c.checked) >= h.recheck {
			c.checked = now
			if due == nil {
				due = make(map[string][]*Conn)
			}
			due[c.cred] = append(due[c.cred], c)
		}
	}
	h.connMu.Unlock()

	for _, c := range dead {
		c.Drop()
	}
	for _, c := range ping {
		c.schedule(c.send(pingFrame))
	}
	for _, cs := range due {
		if !h.stillValid(cs[0].ctx) {
			for _, c := range cs {
				c.schedule(c.close(ws.StatusPolicyViolation, ReasonRevoked, true))
			}
		}
	}

	shut := h.isShut()
	h.connMu.Lock()
	defer h.connMu.Unlock()
	if len(h.conns) == 0 || shut {
		h.sweep = nil
		return
	}
	h.sweep.Reset(h.sweepInterval())
}

// isShut reports whether the hub has shut down.
func (h *Hub) isShut() bool {
	h.inMu.Lock()
	defer h.inMu.Unlock()
	return h.shut
}

// shutdown closes every connection with 1001 once the events already
// received are written.
func (h *Hub) shutdown() {
	h.inMu.Lock()
	h.shut = true
	start := !h.dispatching
	h.dispatching = true
	h.inMu.Unlock()
	if start {
		go h.dispatch()
	}
}

// Open returns how many connections receive events (closing ones no
// longer do).
func (h *Hub) Open() int { return int(h.count.Load()) }

// QuestionFrame returns the frame of a pending interaction's message for
// replays (Encoder.Question), encoded once for every connection.
func (h *Hub) QuestionFrame(in *hitl.Interaction) ([]byte, error) {
	return h.frames.question(in)
}
