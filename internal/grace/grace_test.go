package grace_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hitl-sh/hitl/internal/grace"
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
		grace.Stop(&wg, 5*time.Second, cancel)
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
		grace.Stop(&wg, 5*time.Second, cancel)
		if took := time.Since(start); took != 5*time.Second {
			t.Errorf("Stop took %s, want the 5s grace", took)
		}
	})
}
