// Package worker runs the background workers of the channels (email, Web
// Push, webhooks): one goroutine, one timer, woken early by a kick, and
// stopped with a moment's grace for the work in flight.
package worker

import (
	"context"
	"sync"
	"time"
)

// MinGap is the least time from one step to the next when a kick wakes
// the loop. Every question and answer kicks the workers; a step costs a
// few reads even when it finds nothing to do, so under a burst of them
// one step takes up what a few milliseconds brought. A kick after a quiet
// moment is taken up at once.
const MinGap = 10 * time.Millisecond

// Loop calls step, sleeps for the duration it returns or until kick
// wakes it (but no sooner than MinGap after the step began), and again,
// until closed is closed.
func Loop(step func() time.Duration, kick, closed <-chan struct{}) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		select {
		case <-kick: // taken up by this step
		default:
		}
		began := time.Now()
		timer.Reset(step())
		select {
		case <-timer.C:
			continue
		case <-kick:
		case <-closed:
			return
		}
		timer.Stop()
		if wait := MinGap - time.Since(began); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-closed:
				return
			}
		}
	}
}

// Wake kicks a Loop without blocking: a kick already waiting covers this
// one.
func Wake(kick chan<- struct{}) {
	select {
	case kick <- struct{}{}:
	default:
	}
}

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
