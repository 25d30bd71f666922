package server

import "sync/atomic"

// heldWaitsMax is how many long-polls that could be parked wait in their
// handlers instead. A held wait costs a goroutine and net/http's buffers,
// 25–40 KiB, where a parked one costs 2.3 KiB; but a parked wait's
// connection goes back to net/http when it ends, to be served by a fresh
// goroutine with new buffers, which costs every answered wait about 9 %
// of the server's CPU per round trip (BENCHMARKS.md). So the first
// waits, as many as a busy team's agents, are held (about 10 MiB at most),
// and only the many beyond them are parked.
const heldWaitsMax = 256

// heldWaits counts the long-polls waiting in their handlers: up to limit
// that could be parked, and every one that cannot be (TLS, HTTP/2, or a
// server not served on its Listener).
type heldWaits struct {
	n     atomic.Int64
	limit int64
}

// hold counts one more held wait and reports true, unless the wait is
// parkable and limit are held already: then it is to be parked.
func (h *heldWaits) hold(parkable bool) bool {
	for {
		n := h.n.Load()
		if parkable && n >= h.limit {
			return false
		}
		if h.n.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// done counts a held wait's end.
func (h *heldWaits) done() { h.n.Add(-1) }

// count is how many waits are held now.
func (h *heldWaits) count() int64 { return h.n.Load() }
