// Package gcheadroom keeps the garbage collector from running many times
// a second on a small heap under load.
//
// With the default GOGC=100 the next collection starts when the heap has
// grown by as much as GOGC's base: the heap live after the last one, the
// goroutines' stacks and the globals. A server whose base is a few MiB but
// which allocates tens of MiB a second under load then collects fifteen
// times a second, and each collection also shrinks the goroutines' stacks,
// which grow again on the next request. Keep lets the heap grow by what
// the program allocates in a set interval, up to a headroom, so that
// collections come no more often than that interval while that costs at
// most the headroom. A lightly loaded program, or one whose base is already
// larger, keeps GOGC=100 and its lean heap.
package gcheadroom

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// The metrics read after each collection: GOGC's base (the heap marked
// live, the stacks scanned, the globals) and the bytes allocated so far.
var readMetrics = []string{"/gc/heap/live:bytes", "/gc/scan/stack:bytes", "/gc/scan/globals:bytes", "/gc/heap/allocs:bytes"}

// Keep sets GOGC after every collection, until stop is called, so that
// the next collection comes no sooner than every at the allocation rate of
// the last cycle, as long as the heap grows by at most headroom bytes
// between collections (by what GOGC=100 allows, when that is more). It
// does nothing when the environment sets GOGC: the operator's setting
// wins.
func Keep(headroom uint64, every time.Duration) (stop func()) {
	if _, set := os.LookupEnv("GOGC"); set || headroom == 0 || every <= 0 {
		return func() {}
	}
	k := &keeper{headroom: headroom, every: every, percent: 100, sample: make([]metrics.Sample, len(readMetrics))}
	for i, name := range readMetrics {
		k.sample[i].Name = name
	}
	k.adjust(time.Now())
	k.arm()
	return k.stop
}

// keeper holds the state between collections; the runtime calls its
// cleanup from one goroutine, after each collection.
type keeper struct {
	headroom uint64
	every    time.Duration
	percent  int // the GOGC last set
	sample   []metrics.Sample
	allocs   uint64    // bytes allocated at the last adjustment
	at       time.Time // when it was

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
		k.adjust(time.Now())
		k.arm()
	}, k)
}

// adjust sets GOGC for the next cycle from the last one's allocation rate.
// It changes it only when it moved by more than a tenth, to leave the
// pacer alone while the load is steady, or when it goes back to 100.
func (k *keeper) adjust(now time.Time) {
	metrics.Read(k.sample)
	var v [4]uint64
	for i, s := range k.sample {
		if s.Value.Kind() != metrics.KindUint64 {
			return
		}
		v[i] = s.Value.Uint64()
	}
	base, allocs := v[0]+v[1]+v[2], v[3]
	var want uint64
	if dt := now.Sub(k.at); !k.at.IsZero() && dt > 0 && allocs >= k.allocs {
		want = uint64(float64(allocs-k.allocs) / dt.Seconds() * k.every.Seconds())
	}
	k.allocs, k.at = allocs, now
	p := Percent(base, want, k.headroom)
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
// scales with GOGC: the goal of a nearly empty heap is heapMinimum × GOGC /
// 100, so GOGC is held to where that is the headroom.
const heapMinimum = 4 << 20

// Percent is the GOGC that lets the heap grow by want bytes before the
// next collection, where GOGC=100 lets it grow by base bytes: never less
// than 100, never more than headroom bytes of growth, and never more than
// makes the runtime's smallest heap goal the headroom.
func Percent(base, want, headroom uint64) int {
	growth := min(want, headroom)
	if growth <= base {
		return 100
	}
	most := max(headroom*100/heapMinimum, 100)
	if base == 0 || growth/base >= most/100 {
		return int(most)
	}
	return int(min(growth*100/base, most))
}
