package broker

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/hitl-sh/hitl"
)

const (
	// gapWait is how long the feed waits for a missing sequence number
	// before reading it from the store's event log (stores that are not
	// shared).
	gapWait = 250 * time.Millisecond
	// catchUpBatch is how many events the feed reads from the log at once.
	catchUpBatch = 1000
)

// feed delivers events to subscribers in sequence order, exactly once each.
//
// Events reach it from the goroutines that committed them, possibly out of
// order; a small reorder buffer restores the order. The rest depends on the
// store:
//
//   - A store used by this process alone (SQLite) commits in sequence order,
//     so a gap is an event still on its way from another goroutine; one not
//     filled in time is read back from the event log.
//   - A shared store (a hitl.EventListener, PostgreSQL) also has events from
//     other processes, and its transactions can commit out of sequence
//     order. Its listener says how far the log is complete (safe); the feed
//     reads the log up to there and never delivers past a number that is
//     still missing below safe, so an event committed late is never
//     skipped. Local events still go out at once when they are next in
//     line.
type feed struct {
	store   hitl.Store
	log     *slog.Logger
	bufSize int
	closed  <-chan struct{}
	// delivered is called under mu for each event delivered, before the
	// subscribers get it (the broker wakes waiters and learns deadlines).
	delivered func(*hitl.Event)

	mu        sync.Mutex
	observers []func(*hitl.Event)
	last      int64                 // newest sequence delivered
	held      map[int64]*hitl.Event // arrived early, waiting for the gap before them
	subs      map[*Subscription]struct{}
	gapTimer  *time.Timer
	done      bool

	// Shared stores only.
	listening bool
	safe      int64         // every event up to here that will exist is committed
	kick      chan struct{} // safe moved; the follower reads the log
}

func newFeed(store hitl.Store, log *slog.Logger, bufSize int, closed <-chan struct{}, delivered func(*hitl.Event)) *feed {
	return &feed{
		store: store, log: log, bufSize: bufSize, closed: closed, delivered: delivered,
		held: make(map[int64]*hitl.Event),
		subs: make(map[*Subscription]struct{}),
		kick: make(chan struct{}, 1),
	}
}

// start sets the newest sequence number delivered; listening selects the
// shared-store mode (see feed).
func (f *feed) start(seq int64, listening bool) {
	f.mu.Lock()
	f.last = seq
	f.safe = seq
	f.listening = listening
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
	if len(f.held) > 0 && f.gapTimer == nil && !f.done && !f.listening {
		f.gapTimer = time.AfterFunc(gapWait, f.fillGap)
	}
}

// drainLocked delivers the held events that are next in line.
func (f *feed) drainLocked() {
	for {
		ev, ok := f.held[f.last+1]
		if !ok {
			return
		}
		delete(f.held, ev.Seq)
		f.last = ev.Seq
		if f.delivered != nil {
			f.delivered(ev)
		}
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
	evs, err := f.store.Events(ctx, after, catchUpBatch)
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

// advance is the store listener's callback: the log is complete up to
// upTo. It only records that and wakes follow, so it never blocks.
func (f *feed) advance(upTo int64) {
	f.mu.Lock()
	if upTo > f.safe {
		f.safe = upTo
	}
	f.mu.Unlock()
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// follow reads the log up to safe each time advance moves it, until ctx
// ends. Several advances while it reads become one more read.
func (f *feed) follow(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.kick:
		}
		for f.catchUp(ctx) {
		}
	}
}

// catchUp delivers the logged events after last and up to safe, in order,
// and reports whether there is more to read now.
func (f *feed) catchUp(ctx context.Context) bool {
	f.mu.Lock()
	after, safe, done := f.last, f.safe, f.done
	f.mu.Unlock()
	if after >= safe || done {
		return false
	}
	evs, err := f.store.Events(ctx, after, catchUpBatch)
	if err != nil {
		if ctx.Err() != nil {
			return false
		}
		f.log.Error("read event log", "after", after, "error", err)
		select {
		case <-ctx.Done():
			return false
		case <-time.After(retryAfterError):
			return true
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ev := range evs {
		if ev.Seq <= f.last {
			continue
		}
		if ev.Seq > safe {
			break // a number before it may still be committing
		}
		// Numbers between last and ev.Seq are at or below safe and not in
		// the log: rolled back, never to appear.
		f.last = ev.Seq - 1
		if _, ok := f.held[ev.Seq]; !ok {
			f.held[ev.Seq] = ev
		}
		f.drainLocked()
	}
	complete := len(evs) < catchUpBatch || evs[len(evs)-1].Seq >= safe
	if complete && f.last < safe {
		// Everything committed up to safe has been read; the rest of the
		// numbers were rolled back.
		f.last = safe
		for seq := range f.held {
			if seq <= f.last {
				delete(f.held, seq)
			}
		}
		f.drainLocked()
	}
	return !complete
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
