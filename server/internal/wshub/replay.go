package wshub

import "net"

// Start returns the sequence number of the newest event before c joined
// the hub: live events after it are streamed, so the replay covers what
// came before.
func (c *Conn) Start() int64 { return c.start }

// Replay writes what a connection missed before it goes live, a few
// frames at a time, on the goroutine that accepted it.
type Replay struct {
	c    *Conn
	bufs net.Buffers
}

// Replay returns the writer of c's replay.
func (c *Conn) Replay() *Replay { return &Replay{c: c} }

// replayChunk is how many frames a replay writes at a time.
const replayChunk = 64

// Add queues frames (such as Hub.QuestionFrame's) and writes them once
// there are enough; false means the connection was dropped.
func (rw *Replay) Add(frames ...[]byte) bool {
	rw.bufs = append(rw.bufs, frames...)
	return len(rw.bufs) < replayChunk || rw.flush()
}

// AddMessage queues one message, as a text frame; false means the
// connection was dropped.
func (rw *Replay) AddMessage(data []byte) bool {
	return rw.Add(appendFrame(nil, data))
}

// Finish writes, after what is queued, one text frame whose payload is
// parts joined (so a long part is not copied); false means the connection
// was dropped.
func (rw *Replay) Finish(parts ...[]byte) bool {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	return rw.Add(append([][]byte{appendFrameHeader(nil, n)}, parts...)...) && rw.flush()
}

// flush writes what is queued; false means the connection was dropped.
func (rw *Replay) flush() bool {
	if len(rw.bufs) == 0 {
		return true
	}
	ok := rw.c.write(rw.bufs, false, false)
	rw.bufs = rw.bufs[:0]
	return ok
}

// GoLive ends c's replay: the live events held meanwhile are queued,
// except those at or before skip (the client has them; so are later ones
// at or before it, when this server's feed is behind the client) and the created
// events of the replayed interactions (until the stream passes upTo), and
// the hub's writers take over.
func (c *Conn) GoLive(replayed map[string]bool, upTo, skip int64) {
	c.mu.Lock()
	c.replaying = false
	c.skip = skip
	if replayed != nil && upTo > c.start {
		c.replayed, c.upTo = replayed, upTo
	}
	if !c.closing {
		for _, e := range c.held {
			if e.ev.Seq > skip && !c.repeatLocked(e.ev) {
				c.queue = append(c.queue, e.frame)
			}
		}
	}
	c.held = nil
	c.mu.Unlock()
	c.flush(true)
}
