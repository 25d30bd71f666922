package gcheadroom

import (
	"os"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const headroom = 32 << 20
	for _, c := range []struct {
		base, want uint64
		percent    int
	}{
		{base: 64 << 20, want: 100 << 20, percent: 100}, // base above the headroom
		{base: 8 << 20, want: 4 << 20, percent: 100},    // a light load: GOGC=100 is enough
		{base: 8 << 20, want: 16 << 20, percent: 200},
		{base: 6 << 20, want: 100 << 20, percent: 533}, // at most the headroom
		{base: 4 << 20, want: 100 << 20, percent: 800},
		{base: 1 << 10, want: 100 << 20, percent: 800}, // the runtime's smallest goal: 32 MiB
		{base: 0, want: 100 << 20, percent: 800},
		{base: 0, want: 0, percent: 100},
	} {
		if got := Percent(c.base, c.want, headroom); got != c.percent {
			t.Errorf("Percent(%d, %d, %d) = %d, want %d", c.base, c.want, headroom, got, c.percent)
		}
	}
	if got := Percent(1<<20, 10<<20, 2<<20); got != 100 {
		t.Errorf("with a 2 MiB headroom GOGC = %d, want 100 (the runtime's smallest goal is 4 MiB)", got)
	}
}

// gogc reads the GOGC the runtime is using.
func gogc() int64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// sink keeps allocations from being optimised away.
var sink []byte

// churn allocates garbage at hundreds of MiB a second until d passes or
// done reports true.
func churn(d time.Duration, done func() bool) {
	for end := time.Now().Add(d); time.Now().Before(end) && !done(); {
		for range 64 {
			sink = make([]byte, 64<<10)
		}
	}
}

func skipIfGOGCSet(t *testing.T) {
	if _, set := os.LookupEnv("GOGC"); set {
		t.Skip("GOGC is set in the environment")
	}
}

func TestKeepRaisesGOGCUnderLoadAndStopRestoresIt(t *testing.T) {
	skipIfGOGCSet(t)
	stop := Keep(64<<20, time.Second) // more than this test's heap
	defer stop()
	churn(10*time.Second, func() bool { return gogc() > 100 })
	if got := gogc(); got <= 100 {
		t.Fatalf("GOGC = %d after allocating fast for 10 s on a small heap, want more than 100", got)
	}
	stop()
	if got := gogc(); got != 100 {
		t.Fatalf("GOGC after stop = %d, want 100", got)
	}
}

func TestKeepLeavesALightLoadAtGOGC100(t *testing.T) {
	skipIfGOGCSet(t)
	stop := Keep(64<<20, time.Millisecond) // a cycle's allocations over a millisecond
	defer stop()
	for range 20 {
		sink = make([]byte, 64<<10)
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
		if got := gogc(); got != 100 {
			t.Fatalf("GOGC = %d with 64 KiB allocated between collections, want 100", got)
		}
	}
}

func TestKeepLeavesTheEnvironmentsGOGC(t *testing.T) {
	t.Setenv("GOGC", "100")
	was := gogc()
	stop := Keep(1<<40, time.Second)
	defer stop()
	churn(time.Second, func() bool { return false })
	if got := gogc(); got != was {
		t.Fatalf("GOGC = %d with GOGC set in the environment, want it left at %d", got, was)
	}
}

// deep uses about n KiB of stack, then waits for release.
func deep(n int, release <-chan struct{}) byte {
	var frame [1024]byte
	if n > 0 {
		frame[n%1024] = deep(n-1, release)
		return frame[0]
	}
	<-release
	return frame[1]
}

func TestKeepCountsTheStacks(t *testing.T) {
	skipIfGOGCSet(t)
	// 2,000 goroutines with about 16 KiB of stack each: some 32 MiB of
	// stacks, which GOGC=100 already lets the heap grow by, on a heap of a
	// few MiB.
	release := make(chan struct{})
	defer close(release)
	for range 2000 {
		go deep(16, release)
	}
	runtime.GC() // the stacks are counted by a collection
	stop := Keep(8<<20, time.Second)
	defer stop()
	churn(2*time.Second, func() bool { return false })
	if got := gogc(); got > 110 {
		t.Fatalf("GOGC = %d with some 32 MiB of stacks and 8 MiB of headroom, want 100", got)
	}
}
