package broker

import (
	"sync"

	"github.com/hitl-sh/hitl"
)

const (
	// recentBytes bounds the memory the recent interactions hold: a few
	// thousand questions, far more than are asked and answered at once.
	recentBytes = 4 << 20
	// recentEntryBytes is the most one interaction kept there may hold.
	recentEntryBytes = recentBytes / 64
)

// recent keeps the interactions of the newest events, so that an agent's
// wait and a person's answer, which nearly always come soon after the
// question, need not read them back from the store.
//
// It is a cache that cannot go stale in the way that matters: it learns an
// interaction's state only from its events — the ones this broker commits,
// before it wakes any waiter, and the ones the feed delivers, in order —
// never from a read, and a state is replaced only by that of a newer event.
// So when it says an interaction is pending, its terminal event has not yet
// been seen here, and an agent that registered as a waiter before asking
// is woken when it is (see waitState). A terminal state never changes, and
// a pending interaction's fields are those it was created with: either is
// exact. An interaction it does not hold is read from the store, as before.
//
// The interactions it returns are shared and must not be modified. Memory
// is bounded by recentBytes, oldest entry out first; an interaction of more
// than recentEntryBytes is not kept.
type recent struct {
	mu      sync.Mutex
	m       map[string]*recentEntry
	fifo    []*recentEntry // insertion order; evicted from the front
	head    int            // fifo[head] is the oldest live slot
	bytes   int
	max     int   // bytes held at most
	entry   int   // bytes one entry may hold at most
	evicted int64 // the newest seq among evicted entries
}

type recentEntry struct {
	in   *hitl.Interaction
	seq  int64 // the event that set in
	size int
}

func newRecent(max, entry int) *recent {
	return &recent{m: make(map[string]*recentEntry), max: max, entry: entry}
}

// get returns the state held for id, or nil.
func (r *recent) get(id string) *hitl.Interaction {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.m[id]; e != nil {
		return e.in
	}
	return nil
}

// put records the state ev carries, unless a newer one is held. An
// interaction not held is added only when no newer event of any
// interaction has been evicted, since an evicted state of its own might be
// newer than ev's.
func (r *recent) put(ev *hitl.Event) {
	in := ev.Interaction
	if in == nil || ev.Seq <= 0 || in.ID != ev.InteractionID {
		return
	}
	size := sizeOf(in)
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.m[in.ID]; e != nil {
		if ev.Seq <= e.seq || (e.in.Status.Terminal() && !in.Status.Terminal()) {
			return
		}
		r.bytes += size - e.size
		e.in, e.seq, e.size = in, ev.Seq, size
		r.evict()
		return
	}
	if ev.Seq <= r.evicted || size > r.entry {
		return
	}
	e := &recentEntry{in: in, seq: ev.Seq, size: size}
	r.m[in.ID] = e
	r.fifo = append(r.fifo, e)
	r.bytes += size
	r.evict()
}

// evict drops the oldest entries until the bytes held are within max.
func (r *recent) evict() {
	for r.bytes > r.max && r.head < len(r.fifo) {
		e := r.fifo[r.head]
		r.fifo[r.head] = nil
		r.head++
		if r.m[e.in.ID] == e {
			delete(r.m, e.in.ID)
		}
		r.bytes -= e.size
		r.evicted = max(r.evicted, e.seq)
	}
	// Compact once the evicted front is at least half of the slice.
	if r.head > 0 && r.head*2 >= len(r.fifo) {
		r.fifo = append(r.fifo[:0:0], r.fifo[r.head:]...)
		r.head = 0
	}
}

// forget drops the interactions ids (purged from the store): an entry
// left in the eviction order holds no bytes any more.
func (r *recent) forget(ids []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		if e := r.m[id]; e != nil {
			delete(r.m, id)
			r.bytes -= e.size
			e.size = 0
		}
	}
}

// len returns how many interactions are held (for tests).
func (r *recent) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.m)
}

// sizeOf estimates the memory in holds: its struct and what it points to.
func sizeOf(in *hitl.Interaction) int {
	n := 640 + len(in.ID) + len(in.Question) + len(in.Context) + len(in.FormSchema) +
		len(in.DefaultResponse) + len(in.IdempotencyKey) + len(in.SourceAgent) +
		len(in.SessionID) + len(in.CreatedBy) + len(in.CreatedVia) + len(in.RequestHash)
	for _, o := range in.Options {
		n += 64 + len(o.Key) + len(o.Label) + len(o.Description)
	}
	n += decodedSize(in.Metadata)
	if t := in.Targets; t != nil {
		for _, s := range append(t.Users, t.Groups...) {
			n += 16 + len(s)
		}
	}
	if res := in.Result; res != nil {
		n += 128 + len(res.Value) + len(res.RespondedBy) + len(res.Channel) + len(res.Reason)
	}
	return n
}

// decodedSize estimates the memory of a decoded JSON value.
func decodedSize(v any) int {
	switch v := v.(type) {
	case map[string]any:
		n := 48
		for k, x := range v {
			n += 48 + len(k) + decodedSize(x)
		}
		return n
	case []any:
		n := 24
		for _, x := range v {
			n += 16 + decodedSize(x)
		}
		return n
	case string:
		return 16 + len(v)
	default:
		return 16
	}
}
