package worker_test

import (
	"context"
	"slices"
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

// loopSteps runs a Loop whose step sleeps for sleep, lets drive kick it
// (through wake) in a synctest bubble, closes it, and returns when each
// step ran, from the start.
func loopSteps(t *testing.T, sleep time.Duration, drive func(wake func())) []time.Duration {
	var steps []time.Duration
	synctest.Test(t, func(t *testing.T) {
		kick, closed := make(chan struct{}, 1), make(chan struct{})
		start := time.Now()
		step := func() time.Duration {
			steps = append(steps, time.Since(start))
			return sleep
		}
		var wg sync.WaitGroup
		wg.Go(func() { worker.Loop(step, kick, closed) })
		drive(func() {
			worker.Wake(kick)
			synctest.Wait()
		})
		close(closed)
		wg.Wait()
	})
	return steps
}

// TestLoopSleepsWhatStepSaysAndWakesOnAKick: the loop sleeps for what
// step returns, a kick wakes it early, and closing ends it.
func TestLoopSleepsWhatStepSaysAndWakesOnAKick(t *testing.T) {
	steps := loopSteps(t, 10*time.Second, func(wake func()) {
		time.Sleep(25 * time.Second) // steps at 0, 10 s and 20 s
		wake()                       // a step at 25 s, then asleep again
	})
	want := []time.Duration{0, 10 * time.Second, 20 * time.Second, 25 * time.Second}
	if !slices.Equal(steps, want) {
		t.Errorf("steps at %v, want %v", steps, want)
	}
}

// TestLoopTakesUpABurstOfKicksInOneStep: kicks that come within MinGap of
// a step's start are taken up by one step at MinGap; a kick after a quiet
// moment is taken up at once.
func TestLoopTakesUpABurstOfKicksInOneStep(t *testing.T) {
	steps := loopSteps(t, time.Hour, func(wake func()) {
		for range 5 { // a kick a millisecond
			time.Sleep(time.Millisecond)
			wake()
		}
		time.Sleep(time.Second) // quiet
		wake()
	})
	want := []time.Duration{0, worker.MinGap, time.Second + 5*time.Millisecond}
	if !slices.Equal(steps, want) {
		t.Errorf("steps at %v, want %v", steps, want)
	}
}
