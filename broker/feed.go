package broker

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/hitl-sh/hitl"
)

// gapWait is how long the feed waits for a missing sequence number before
// reading it from the store's event log.
const gapWait = 250 * time.Millisecond

// feed delivers events to subscribers in sequence order, exactly once each.
// Events reach it from the goroutines that committed them, possibly out of
// order; a small reorder buffer restores the order, and a gap that is not
// filled in time is read back from the event log.
type feed struct {
	store   hitl.Store
	log     *slog.Logger
	bufSize int
	closed  <-chan struct{}

	mu        sync.Mutex
	observers []func(*hitl.Event)
	last      int64                 // newest sequence delivered
	held      map[int64]*hitl.Event // arrived early, waiting for the gap before them
	subs      map[*Subscription]struct{}
	gapTimer  *time.Timer
	done      bool
}

func newFeed(store hitl.Store, log *slog.Logger, bufSize int, closed <-chan struct{}) *feed {
	return &feed{
		store: store, log: log, bufSize: bufSize, closed: closed,
		held: make(map[int64]*hitl.Event),
		subs: make(map[*Subscription]struct{}),
	}
}

func (f *feed) start(seq int64) {
	f.mu.Lock()
	f.last = seq
	f.mu.Unlock()
}

// publish hands a committed event to the feed.
func (f *feed) publish(ev *hitl.Event) {
	if ev == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if ev.Seq <= f.last {
		return
	}
	f.held[ev.Seq] = ev
	f.drainLocked()
	if len(f.held) > 0 && f.gapTimer == nil && !f.done {
		f.gapTimer = time.AfterFunc(gapWait, f.fillGap)
	}
}

func (f *feed) drainLocked() {
	for {
		ev, ok := f.held[f.last+1]
		if !ok {
			return
		}
		delete(f.held, ev.Seq)
		f.last = ev.Seq
		for _, fn := range f.observers {
			fn(ev)
		}
		for s := range f.subs {
			select {
			case s.c <- ev:
			default:
				f.dropLocked(s, errSlow)
			}
		}
	}
}

// fillGap reads events missing from the reorder buffer from the log.
func (f *feed) fillGap() {
	f.mu.Lock()
	f.gapTimer = nil
	after := f.last
	waiting := len(f.held) > 0 && !f.done
	f.mu.Unlock()
	if !waiting {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	evs, err := f.store.Events(ctx, after, 1000)
	if err != nil {
		f.log.Error("read event log to fill a gap", "after", after, "error", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ev := range evs {
		if ev.Seq > f.last {
			f.held[ev.Seq] = ev
		}
	}
	if len(evs) == 0 && err == nil && len(f.held) > 0 {
		// The log has nothing after last: the missing sequence numbers were
		// never committed. Skip to the oldest held event.
		oldest := int64(-1)
		for seq := range f.held {
			if oldest < 0 || seq < oldest {
				oldest = seq
			}
		}
		f.log.Warn("event sequence gap skipped", "from", f.last+1, "to", oldest-1)
		f.last = oldest - 1
	}
	f.drainLocked()
	if len(f.held) > 0 && f.gapTimer == nil && !f.done {
		f.gapTimer = time.AfterFunc(gapWait, f.fillGap)
	}
}

func (f *feed) dropLocked(s *Subscription, err error) {
	if _, ok := f.subs[s]; !ok {
		return
	}
	delete(f.subs, s)
	s.err = err
	close(s.c)
}

func (f *feed) closeAll(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.done = true
	if f.gapTimer != nil {
		f.gapTimer.Stop()
	}
	for s := range f.subs {
		f.dropLocked(s, err)
	}
}
