package broker

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/hitl-sh/hitl"
)

// pendingCounts keeps how many questions are pending per agent, type and
// targets, from one snapshot of the store and the events after it, so
// that the inbox's counts cost the same with a million pending questions
// as with ten: every new inbox and every open one, after each question,
// asks for them, a person limited to the questions that target them
// (a responder) too. Until the snapshot is read (and when reading it
// failed) Counts reads the store instead.
type pendingCounts struct {
	mu    sync.Mutex
	ready bool
	// groups is the count per agent, type and targets; a group that
	// reaches zero is removed.
	groups map[groupKey]int
	// targets holds the targets each targets key stands for, with how many
	// pending questions have them; a key no question has is removed.
	targets map[string]*targetSet
	// widening holds the targets key each pending question whose
	// escalation may still add targets was counted under, by id: an
	// escalated event moves it from that key to its new one, and its end
	// takes it from the key it is under. Every other question's targets
	// never change, so its events name the key it was counted under.
	widening map[string]string
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

// groupKey is one group of pending questions: an agent's, of one type,
// with one set of targets (targetsKey; "" for untargeted questions).
type groupKey struct {
	agent   string
	typ     hitl.Type
	targets string
}

// targetSet is one set of targets and how many pending questions have it.
type targetSet struct {
	targets *hitl.Targets
	n       int
}

// targetsKey returns the key of t's set of targets: "" for untargeted,
// else its users and groups, each sorted and named once, so that the same
// set named in another order (an escalation appends) has the same key.
func targetsKey(t *hitl.Targets) string {
	if t.Untargeted() {
		return ""
	}
	users, groups := slices.Clone(t.Users), slices.Clone(t.Groups)
	slices.Sort(users)
	slices.Sort(groups)
	b, _ := json.Marshal([2][]string{slices.Compact(users), slices.Compact(groups)}) // strings always encode
	return string(b)
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
			snap, err := b.store.CountPending(ctx, after)
			if err == nil {
				pc.load(snap)
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
func (pc *pendingCounts) load(snap *hitl.PendingCounts) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.abandoned {
		return
	}
	pc.groups = make(map[groupKey]int, len(snap.Groups)+len(snap.Targeted))
	pc.targets = map[string]*targetSet{}
	for _, g := range snap.Groups {
		pc.add(groupKey{g.Agent, g.Type, ""}, nil, g.N)
	}
	for _, g := range snap.Targeted {
		// The targeted questions are among every pending one: they move
		// from the untargeted group to their own.
		pc.add(groupKey{g.Agent, g.Type, ""}, nil, -g.N)
		pc.add(groupKey{g.Agent, g.Type, targetsKey(g.Targets)}, g.Targets, g.N)
	}
	pc.widening = make(map[string]string, len(snap.Widening))
	for id, t := range snap.Widening {
		pc.widening[id] = targetsKey(t)
	}
	pc.inSnapshot = make(map[int64]bool, len(snap.Seen))
	for _, seq := range snap.Seen {
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

// apply counts one event in or out, unless the snapshot counted it. An
// event's interaction is its state when the event is read, which may be
// later than the event (on another replica, or read from the log): its
// agent and type are the question's, but its targets may have been
// widened since, so a question whose targets may change is moved and
// taken out by the key it was counted under (widening).
func (pc *pendingCounts) apply(ev *hitl.Event) {
	if pc.inSnapshot[ev.Seq] {
		delete(pc.inSnapshot, ev.Seq)
		return
	}
	in := ev.Interaction
	if in == nil {
		return
	}
	switch ev.Type {
	case hitl.EventCreated:
		k := groupOf(in)
		pc.add(k, in.Targets, 1)
		if in.MayWiden() {
			pc.widening[in.ID] = k.targets
		}
	case hitl.EventEscalated:
		was, ok := pc.widening[in.ID]
		if !ok {
			return
		}
		k := groupOf(in)
		if was != k.targets {
			pc.add(groupKey{k.agent, k.typ, was}, nil, -1)
			pc.add(k, in.Targets, 1)
		}
		if in.MayWiden() {
			pc.widening[in.ID] = k.targets
		} else {
			delete(pc.widening, in.ID)
		}
	case hitl.EventAnswered, hitl.EventExpired, hitl.EventCancelled:
		k := groupKey{in.SourceAgent, in.Type, ""}
		if was, ok := pc.widening[in.ID]; ok {
			k.targets = was
			delete(pc.widening, in.ID)
		} else {
			k = groupOf(in)
		}
		pc.add(k, nil, -1)
	}
}

// groupOf returns the group in is counted in by its targets as they are.
func groupOf(in *hitl.Interaction) groupKey {
	return groupKey{in.SourceAgent, in.Type, targetsKey(in.Targets)}
}

// add counts n more (or fewer) questions in group k, whose targets are t
// (needed only for a key not counted yet).
func (pc *pendingCounts) add(k groupKey, t *hitl.Targets, n int) {
	if pc.groups[k] += n; pc.groups[k] <= 0 {
		delete(pc.groups, k)
	}
	if k.targets == "" {
		return
	}
	set := pc.targets[k.targets]
	if set == nil {
		if n <= 0 || t == nil {
			return
		}
		set = &targetSet{targets: t}
		pc.targets[k.targets] = set
	}
	if set.n += n; set.n <= 0 {
		delete(pc.targets, k.targets)
	}
}

// read returns the counts as groups of the questions a may see (every
// question when a is nil), or false until the snapshot is read.
func (pc *pendingCounts) read(a *hitl.Audience) ([]hitl.CountGroup, bool) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if !pc.ready {
		return nil, false
	}
	var sees map[string]bool
	if a != nil {
		sees = make(map[string]bool, len(pc.targets))
		for k, set := range pc.targets {
			sees[k] = set.targets.Includes(*a)
		}
	}
	merged := make(map[groupKey]int, len(pc.groups))
	for k, n := range pc.groups {
		if k.targets != "" && a != nil && !sees[k.targets] {
			continue
		}
		merged[groupKey{k.agent, k.typ, ""}] += n
	}
	groups := make([]hitl.CountGroup, 0, len(merged))
	for k, n := range merged {
		groups = append(groups, hitl.CountGroup{Agent: k.agent, Type: k.typ, N: n})
	}
	return groups, true
}

// kept reports whether the counts answer f alone: the pending
// interactions, narrowed by agents and types at most, and by who may see
// them.
func kept(f hitl.ListFilter) bool {
	return f.Status == hitl.StatusPending && f.IdempotencyKey == "" && f.CreatedBy == "" && f.SessionID == "" && f.Project == "" &&
		!f.Workflow && len(f.Channels) == 0 && f.Query == ""
}
