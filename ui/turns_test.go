package ui_test

import (
	"flag"
	"runtime"
	"strconv"
	"testing"
)

// Turns at the browser. The tests drive one Chromium, which needs the CPU:
// no more of them run at once than go test's -parallel allows (by default
// one per CPU). A few tests spend a minute mostly waiting, holding a page
// open to see that it stays live; counted against -parallel, each would
// idle one of the two turns for that minute. So every parallel test is
// let go at once (useTurns raises -parallel), and the tests that drive the
// browser take turns (parallel); the waiting ones do not (parallelIdle).
var turns chan struct{}

// useTurns sets up the turns from -parallel, before the tests run: the
// turns are as many as -parallel says, and go test's own limit is lifted.
func useTurns() {
	flag.Parse()
	n := runtime.GOMAXPROCS(0)
	if f := flag.Lookup("test.parallel"); f != nil {
		if v, err := strconv.Atoi(f.Value.String()); err == nil && v > 0 {
			n = v
		}
		_ = f.Value.Set("1000")
	}
	turns = make(chan struct{}, n)
}

// parallel runs t in parallel with the other tests, in its turn: it waits
// until fewer than -parallel other tests are driving the browser, and
// holds its turn until it ends, cleanups included.
func parallel(t *testing.T) {
	t.Helper()
	t.Parallel()
	turns <- struct{}{}
	t.Cleanup(func() { <-turns })
}

// parallelIdle runs t in parallel with the other tests without a turn: for
// a test that holds a page open and mostly waits, so that the others
// drive the browser meanwhile. It is also for a test whose browser work
// is all in subtests, which take the turns.
func parallelIdle(t *testing.T) {
	t.Helper()
	t.Parallel()
}
