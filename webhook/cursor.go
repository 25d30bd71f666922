package webhook

import (
	"sort"
	"sync"
	"time"

	"github.com/hitl-sh/hitl"
)

// cursor is where the worker is in the event log: the store's cursor as
// this worker last read or wrote it, and the last event it has read,
// ahead of the store's while the events read since made no rows (see
// enqueue). The zero value is unknown: it is read from the store.
type cursor struct {
	stored    int64
	scanned   int64     // ≥ stored
	heldSince time.Time // when scanned went past stored
	known     bool
}

// maxRecent bounds the events held in memory; past it the oldest go, and
// the worker reads them from the store.
const maxRecent = 1024

// recent holds the events the feed has delivered that the worker has not
// read yet, so that it need not read them back from the store: every one
// after seq `after`, in order.
type recent struct {
	mu     sync.Mutex
	events []*hitl.Event
	after  int64
	begun  bool
}

// begin says from where every event is held: those after seq, the newest
// event before the observer's first. Until then none is.
func (r *recent) begin(seq int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.begun = true
	r.dropLocked(seq)
}

// add holds ev, the next event delivered.
func (r *recent) add(ev *hitl.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.events) >= maxRecent {
		r.dropLocked(r.events[len(r.events)/2].Seq)
	}
	r.events = append(r.events, ev)
}

// since returns the events after from and up to horizon, at most limit,
// and whether every such event is held.
func (r *recent) since(from, horizon int64, limit int) ([]*hitl.Event, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.begun || from < r.after {
		return nil, false
	}
	i := sort.Search(len(r.events), func(i int) bool { return r.events[i].Seq > from })
	var out []*hitl.Event
	for _, ev := range r.events[i:] {
		if ev.Seq > horizon || len(out) == limit {
			break
		}
		out = append(out, ev)
	}
	return out, true
}

// drop lets go of the events up to seq, read by now.
func (r *recent) drop(seq int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropLocked(seq)
}

// dropLocked is drop with r.mu held.
func (r *recent) dropLocked(seq int64) {
	i := sort.Search(len(r.events), func(i int) bool { return r.events[i].Seq > seq })
	if i > 0 {
		r.events = append([]*hitl.Event(nil), r.events[i:]...)
	}
	r.after = max(r.after, seq)
}
