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
		live, headroom uint64
		want           int
	}{
		{live: 64 << 20, headroom: 32 << 20, want: 100},
		{live: 32 << 20, headroom: 32 << 20, want: 100},
		{live: 16 << 20, headroom: 32 << 20, want: 200},
		{live: 6 << 20, headroom: 32 << 20, want: 533},
		{live: 1 << 10, headroom: 32 << 20, want: maxPercent},
		{live: 0, headroom: 32 << 20, want: maxPercent},
	} {
		if got := Percent(c.live, c.headroom); got != c.want {
			t.Errorf("Percent(%d, %d) = %d, want %d", c.live, c.headroom, got, c.want)
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
