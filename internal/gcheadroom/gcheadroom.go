// Package gcheadroom keeps the garbage collector from running many times
// a second on a small heap.
//
// With the default GOGC=100 the next collection starts when the heap has
// grown by as much as was live after the last one. A server whose live
// heap is a few MiB but which allocates tens of MiB a second under load
// then collects 15 times a second, and each collection also shrinks the
// goroutines' stacks, which grow again on the next request. Keep raises
// that growth to at least a fixed headroom while GOGC=100's growth (the
// live heap, the goroutines' stacks and the globals) is smaller than it,
// and leaves GOGC's 100 % once it is larger: the memory it costs is at
// most the headroom.
package gcheadroom

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// The metrics the runtime's heap goal is made of: the next collection
// starts when the heap has grown past live by GOGC % of live, the stacks
// and the globals together.
var goalMetrics = []string{"/gc/heap/live:bytes", "/gc/scan/stack:bytes", "/gc/scan/globals:bytes"}

// Keep sets the heap's growth between collections to at least headroom
// bytes, after every collection, until stop is called. It does nothing
// when the environment sets GOGC: the operator's setting wins.
func Keep(headroom uint64) (stop func()) {
	if _, set := os.LookupEnv("GOGC"); set || headroom == 0 {
		return func() {}
	}
	k := &keeper{headroom: headroom, percent: 100, sample: make([]metrics.Sample, len(goalMetrics))}
	for i, name := range goalMetrics {
		k.sample[i].Name = name
	}
	k.adjust()
	k.arm()
	return k.stop
}

// keeper holds the state between collections; the runtime calls its
// cleanup from one goroutine, after each collection.
type keeper struct {
	headroom uint64
	percent  int // the GOGC last set
	sample   []metrics.Sample

	mu      sync.Mutex
	stopped bool
}

// sentinel is garbage made to be collected: its cleanup runs after the
// collection that found it unreachable.
type sentinel struct{ _ [64]byte }

// arm allocates a sentinel whose cleanup adjusts GOGC and arms the next.
func (k *keeper) arm() {
	runtime.AddCleanup(new(sentinel), func(k *keeper) {
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.stopped {
			return
		}
		k.adjust()
		k.arm()
	}, k)
}

// adjust sets GOGC so that the next collection starts after the heap has
// grown by max(base, headroom), where base is what GOGC=100 would let it
// grow by: the live heap, the stacks and the globals. It changes it only
// when it moved by more than a tenth, to leave the pacer alone while the
// heap is steady, or back to 100 once the headroom is not needed.
func (k *keeper) adjust() {
	metrics.Read(k.sample)
	var base uint64
	for _, s := range k.sample {
		if s.Value.Kind() != metrics.KindUint64 {
			return
		}
		base += s.Value.Uint64()
	}
	p := Percent(base, k.headroom)
	if d := p - k.percent; d*10 > k.percent || -d*10 > k.percent || (p == 100 && d != 0) {
		debug.SetGCPercent(p)
		k.percent = p
	}
}

// stop restores GOGC's default and ends the adjustments.
func (k *keeper) stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.stopped {
		k.stopped = true
		debug.SetGCPercent(100)
	}
}

// heapMinimum is the runtime's smallest heap goal at GOGC=100, which it
// scales with GOGC: the goal of a nearly empty heap (at startup) is
// heapMinimum × GOGC / 100, so GOGC is held to where that is headroom.
const heapMinimum = 4 << 20

// Percent is the GOGC that lets the heap grow by at least headroom bytes
// before the next collection, where GOGC=100 lets it grow by base bytes:
// 100 once base ≥ headroom, and at most what makes the runtime's smallest
// heap goal headroom.
func Percent(base, headroom uint64) int {
	most := max(headroom*100/heapMinimum, 100)
	switch {
	case base >= headroom:
		return 100
	case base == 0 || headroom/base >= most/100:
		return int(most)
	}
	return int(min(headroom*100/base, most))
}
