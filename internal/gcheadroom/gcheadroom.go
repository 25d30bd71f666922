// Package gcheadroom keeps the garbage collector from running many times
// a second on a small heap.
//
// With the default GOGC=100 the next collection starts when the heap has
// grown by as much as was live after the last one. A server whose live
// heap is a few MiB but which allocates tens of MiB a second under load
// then collects 15 times a second, and each collection also shrinks the
// goroutines' stacks, which grow again on the next request. Keep raises
// that growth to at least a fixed headroom while the live heap is smaller
// than it, and leaves GOGC's 100 % once it is larger: the memory it costs
// is at most the headroom.
package gcheadroom

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// liveMetric is the heap marked live by the last collection.
const liveMetric = "/gc/heap/live:bytes"

// Keep sets the heap's growth between collections to at least headroom
// bytes, after every collection, until stop is called. It does nothing
// when the environment sets GOGC: the operator's setting wins.
func Keep(headroom uint64) (stop func()) {
	if _, set := os.LookupEnv("GOGC"); set || headroom == 0 {
		return func() {}
	}
	k := &keeper{headroom: headroom, percent: 100, sample: []metrics.Sample{{Name: liveMetric}}}
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
// grown by max(live, headroom). It changes it only when it moved by more
// than a tenth, to leave the pacer alone while the heap is steady.
func (k *keeper) adjust() {
	metrics.Read(k.sample)
	if k.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	p := Percent(k.sample[0].Value.Uint64(), k.headroom)
	if d := p - k.percent; d*10 > k.percent || -d*10 > k.percent {
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

// maxPercent bounds GOGC while the live heap is nearly empty (at startup).
const maxPercent = 10000

// Percent is the GOGC that lets a heap of live bytes grow by at least
// headroom bytes before the next collection: 100 once live ≥ headroom.
func Percent(live, headroom uint64) int {
	if live >= headroom {
		return 100
	}
	if live == 0 || headroom/live >= maxPercent/100 {
		return maxPercent
	}
	return int(headroom * 100 / live)
}
