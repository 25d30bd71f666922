package worker_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hitl-sh/hitl/internal/worker"
)

// TestWorkThatFinishesIsNotCancelled: work that ends within the grace
// returns before it, and its context is cancelled only afterwards.
func TestWorkThatFinishesIsNotCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var cancelledEarly bool
		wg.Go(func() {
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
				cancelledEarly = true
			}
		})
		start := time.Now()
		worker.Stop(&wg, 5*time.Second, cancel)
		if cancelledEarly {
			t.Error("the work was cancelled before its grace ended")
		}
		if took := time.Since(start); took != time.Second {
			t.Errorf("Stop took %s, want 1s (the work's own time)", took)
		}
	})
}

// TestStuckWorkIsCutOff: work that outlives the grace gets its context
// cancelled when the grace ends, and Stop returns once it has ended.
func TestStuckWorkIsCutOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { <-ctx.Done() })
		start := time.Now()
		worker.Stop(&wg, 5*time.Second, cancel)
		if took := time.Since(start); took != 5*time.Second {
			t.Errorf("Stop took %s, want the 5s grace", took)
		}
	})
}

// TestLoopSleepsWhatStepSaysAndWakesOnAKick: the loop sleeps for what
// step returns, a kick wakes it early, and closing ends it.
func TestLoopSleepsWhatStepSaysAndWakesOnAKick(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kick, closed := make(chan struct{}, 1), make(chan struct{})
		var steps []time.Duration
		start := time.Now()
		step := func() time.Duration {
			steps = append(steps, time.Since(start))
			return 10 * time.Second
		}
		var wg sync.WaitGroup
		wg.Go(func() { worker.Loop(step, kick, closed) })
		time.Sleep(25 * time.Second) // steps at 0, 10 s and 20 s
		worker.Wake(kick)
		synctest.Wait() // a step at 25 s, then asleep again
		close(closed)
		wg.Wait()
		want := []time.Duration{0, 10 * time.Second, 20 * time.Second, 25 * time.Second}
		if len(steps) != len(want) {
			t.Fatalf("steps at %v, want %v", steps, want)
		}
		for i := range want {
			if steps[i] != want[i] {
				t.Errorf("steps at %v, want %v", steps, want)
				break
			}
		}
	})
}

// TestLoopTakesUpABurstOfKicksInOneStep: kicks that come within MinGap of
// a step's start are taken up by one step at MinGap; a kick after a quiet
// moment is taken up at once.
func TestLoopTakesUpABurstOfKicksInOneStep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kick, closed := make(chan struct{}, 1), make(chan struct{})
		var steps []time.Duration
		start := time.Now()
		step := func() time.Duration {
			steps = append(steps, time.Since(start))
			return time.Hour
		}
		var wg sync.WaitGroup
		wg.Go(func() { worker.Loop(step, kick, closed) })
		for range 5 { // a kick a millisecond
			time.Sleep(time.Millisecond)
			worker.Wake(kick)
			synctest.Wait()
		}
		time.Sleep(time.Second) // quiet
		worker.Wake(kick)
		synctest.Wait()
		close(closed)
		wg.Wait()
		quiet := time.Second + 5*time.Millisecond
		want := []time.Duration{0, worker.MinGap, quiet}
		if len(steps) != len(want) {
			t.Fatalf("steps at %v, want %v", steps, want)
		}
		for i := range want {
			if steps[i] != want[i] {
				t.Errorf("steps at %v, want %v", steps, want)
				break
			}
		}
	})
}
