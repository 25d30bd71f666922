package turns

import (
	"os"
	"sync"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	Use(1)
	os.Exit(m.Run())
}

// TestTurns: no more tests work at once than there are turns, and a test
// that waits without a turn sees every turn taken meanwhile.
func TestTurns(t *testing.T) {
	Idle(t)
	var (
		mu             sync.Mutex
		working, most  int
		allBusy        = make(chan struct{})
		allBusyClosing sync.Once
	)
	n := cap(turns)
	for range 4 * n {
		t.Run("working", func(t *testing.T) {
			Parallel(t)
			mu.Lock()
			working++
			most = max(most, working)
			if working == n {
				allBusyClosing.Do(func() { close(allBusy) })
			}
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
			mu.Lock()
			working--
			mu.Unlock()
		})
	}
	t.Run("waiting", func(t *testing.T) {
		Idle(t)
		select {
		case <-allBusy:
		case <-time.After(10 * time.Second):
			t.Errorf("the %d turns were never all taken while a test without one waited", n)
		}
	})
	t.Cleanup(func() {
		if most > n {
			t.Errorf("%d tests worked at once, with %d turns", most, n)
		}
	})
}
