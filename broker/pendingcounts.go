package broker

import (
	"context"
	"sync"
	"time"

	"github.com/hitl-sh/hitl"
)

// pendingCounts keeps how many questions are pending per agent and type,
// from one snapshot of the store and the events after it, so that the
// inbox's counts cost the same with a million pending questions as with
// ten: every new inbox and every open one, after each question, asks for
// them. Until the snapshot is read (and when reading it failed) Counts
// reads the store instead.
type pendingCounts struct {
	mu    sync.Mutex
	ready bool
	// groups is the count per agent and type; a group that reaches zero
	// is removed.
	groups map[groupKey]int
	// inSnapshot holds the events after the observer's start that the
	// snapshot already counted: told of later, they are skipped.
	inSnapshot map[int64]bool
	// early holds the events told before the snapshot was read, up to
	// maxEarly; beyond that the counts give up (abandoned) and Counts keeps
	// reading the store.
	early     []*hitl.Event
	abandoned bool
	// loaded is closed once the snapshot is read.
	loaded chan struct{}
}

type groupKey struct {
	agent string
	typ   hitl.Type
}

// maxEarly bounds the events held while the snapshot cannot be read.
const maxEarly = 100_000

// snapshotRetry is how long the counts wait before reading the snapshot
// again after a store error.
const snapshotRetry = 5 * time.Second

// start registers the counts as an observer of b's events and reads the
// snapshot in the background; b.wg tracks it.
func (pc *pendingCounts) start(ctx context.Context, b *Broker) {
	pc.loaded = make(chan struct{})
	after := b.Observe(pc.observe)
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		for {
			groups, seen, err := b.store.PendingGroups(ctx, after)
			if err == nil {
				pc.load(groups, seen)
				return
			}
			if pc.gaveUp() {
				b.log.Error("read the counts of pending interactions: gave up after too many events; the inbox's counts read the store", "error", err)
				return
			}
			b.log.Warn("read the counts of pending interactions; the inbox's counts read the store meanwhile", "error", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(snapshotRetry):
			}
		}
	}()
}

// load sets the snapshot's counts and applies the events told meanwhile
// that it did not count.
func (pc *pendingCounts) load(groups []hitl.CountGroup, seen []int64) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.abandoned {
		return
	}
	pc.groups = make(map[groupKey]int, len(groups))
	for _, g := range groups {
		pc.groups[groupKey{g.Agent, g.Type}] = g.N
	}
	pc.inSnapshot = make(map[int64]bool, len(seen))
	for _, seq := range seen {
		pc.inSnapshot[seq] = true
	}
	for _, ev := range pc.early {
		pc.apply(ev)
	}
	pc.early, pc.ready = nil, true
	close(pc.loaded)
}

// observe is told every event in order (Broker.Observe).
func (pc *pendingCounts) observe(ev *hitl.Event) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	switch {
	case pc.abandoned:
	case !pc.ready && len(pc.early) >= maxEarly:
		pc.early, pc.abandoned = nil, true
	case !pc.ready:
		pc.early = append(pc.early, ev)
	default:
		pc.apply(ev)
	}
}

// gaveUp reports whether the counts were abandoned.
func (pc *pendingCounts) gaveUp() bool {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return pc.abandoned
}

// apply counts one event in or out, unless the snapshot counted it.
func (pc *pendingCounts) apply(ev *hitl.Event) {
	if pc.inSnapshot[ev.Seq] {
		delete(pc.inSnapshot, ev.Seq)
		return
	}
	if ev.Interaction == nil {
		return
	}
	k := groupKey{ev.Interaction.SourceAgent, ev.Interaction.Type}
	switch ev.Type {
	case hitl.EventCreated:
		pc.groups[k]++
	case hitl.EventAnswered, hitl.EventExpired, hitl.EventCancelled:
		if pc.groups[k]--; pc.groups[k] <= 0 {
			delete(pc.groups, k)
		}
	}
}

// read returns the counts as groups, or false until the snapshot is read.
func (pc *pendingCounts) read() ([]hitl.CountGroup, bool) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if !pc.ready {
		return nil, false
	}
	groups := make([]hitl.CountGroup, 0, len(pc.groups))
	for k, n := range pc.groups {
		groups = append(groups, hitl.CountGroup{Agent: k.agent, Type: k.typ, N: n})
	}
	return groups, true
}

// kept reports whether the counts answer f alone: the pending
// interactions, narrowed by agents and types at most.
func kept(f hitl.ListFilter) bool {
	return f.Status == hitl.StatusPending && f.IdempotencyKey == "" && f.CreatedBy == "" && f.SessionID == "" && f.Project == "" &&
		!f.Workflow && f.VisibleTo == nil && len(f.Channels) == 0 && f.Query == ""
}
