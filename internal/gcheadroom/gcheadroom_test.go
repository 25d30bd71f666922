package gcheadroom

import (
	"os"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		base, headroom uint64
		want           int
	}{
		{base: 64 << 20, headroom: 32 << 20, want: 100},
		{base: 32 << 20, headroom: 32 << 20, want: 100},
		{base: 16 << 20, headroom: 32 << 20, want: 200},
		{base: 6 << 20, headroom: 32 << 20, want: 533},
		{base: 5 << 20, headroom: 32 << 20, want: 640},
		{base: 4 << 20, headroom: 32 << 20, want: 800},
		{base: 1 << 10, headroom: 32 << 20, want: 800}, // the runtime's minimum goal: 32 MiB
		{base: 0, headroom: 32 << 20, want: 800},
		{base: 1 << 20, headroom: 2 << 20, want: 100},
	} {
		if got := Percent(c.base, c.headroom); got != c.want {
			t.Errorf("Percent(%d, %d) = %d, want %d", c.base, c.headroom, got, c.want)
		}
	}
}

// gogc reads the GOGC the runtime is using.
func gogc() int64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

func TestKeepRaisesGOGCOnASmallHeapAndStopRestoresIt(t *testing.T) {
	if _, set := os.LookupEnv("GOGC"); set {
		t.Skip("GOGC is set in the environment")
	}
	stop := Keep(64 << 20) // more than this test's heap
	defer stop()
	if got := gogc(); got <= 100 {
		t.Fatalf("GOGC right after Keep = %d, want more than 100", got)
	}
	// After collections, the cleanup sets it again from the live heap.
	before := gogc()
	deadline := time.Now().Add(10 * time.Second)
	for buf := make([][]byte, 0, 64); ; {
		buf = append(buf, make([]byte, 1<<20)) // the live heap grows: GOGC must fall
		runtime.GC()
		if gogc() < before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GOGC stayed at %d or more over collections while the live heap grew", before)
		}
		time.Sleep(10 * time.Millisecond)
		runtime.KeepAlive(buf)
	}
	stop()
	if got := gogc(); got != 100 {
		t.Fatalf("GOGC after stop = %d, want 100", got)
	}
}

func TestKeepLeavesTheEnvironmentsGOGC(t *testing.T) {
	t.Setenv("GOGC", "100")
	was := gogc()
	stop := Keep(1 << 40)
	defer stop()
	runtime.GC()
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
	if _, set := os.LookupEnv("GOGC"); set {
		t.Skip("GOGC is set in the environment")
	}
	// 2,000 goroutines with about 16 KiB of stack each: some 32 MiB of
	// stacks, which GOGC=100 already lets the heap grow by, on a heap of a
	// few MiB.
	release := make(chan struct{})
	defer close(release)
	for range 2000 {
		go deep(16, release)
	}
	stop := Keep(8 << 20)
	defer stop()
	deadline := time.Now().Add(10 * time.Second)
	for gogc() != 100 {
		if time.Now().After(deadline) {
			t.Fatalf("GOGC = %d with some 32 MiB of stacks and 8 MiB of headroom, want 100", gogc())
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}
