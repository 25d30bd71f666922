// Package grace stops background workers: work in flight may finish for a
// moment, then it is cut off.
package grace

import (
	"context"
	"sync"
	"time"
)

// Stop waits up to d for wg, then calls cancel (which should end the
// work's context) and waits for wg again. A row being sent is better
// recorded than sent twice, so work gets the moment; a stuck peer does
// not hold a shutdown for longer.
func Stop(wg *sync.WaitGroup, d time.Duration, cancel context.CancelFunc) {
	finished := make(chan struct{})
	go func() {
		wg.Wait()
		close(finished)
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-finished:
	case <-timer.C:
	}
	cancel()
	wg.Wait()
}
