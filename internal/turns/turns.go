// Package turns lets a test package's parallel tests take turns at the
// CPU without counting the tests that mostly wait.
//
// go test runs at most -parallel tests at once (by default one per CPU).
// A few tests hold a page, a stream or a request open for a minute to see
// that it stays live, and spend it waiting: counted against -parallel,
// each idles one of the two turns a two-CPU machine has for that minute.
// With Use in TestMain, every parallel test is let go at once, and the
// tests that work take one of the package's turns (Parallel); those that
// wait take none (Idle).
package turns

import (
	"flag"
	"runtime"
	"strconv"
	"testing"
)

var turns chan struct{}

// Use sets up perCPU turns per CPU, or as many as -parallel when it is
// given, before the tests run, and lifts go test's own limit. A package
// whose tests compute (drive a browser, run agents' CLIs) takes one per
// CPU; one whose tests mostly wait on replies and deadlines, more. It
// parses the flags, so call it first in TestMain.
func Use(perCPU int) {
	flag.Parse()
	n := perCPU * runtime.GOMAXPROCS(0)
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if f := flag.Lookup("test.parallel"); f != nil {
		if v, err := strconv.Atoi(f.Value.String()); given && err == nil && v > 0 {
			n = v
		}
		_ = f.Value.Set("1000")
	}
	turns = make(chan struct{}, n)
}

// Parallel runs t in parallel with the other tests, in its turn: it waits
// until a turn is free, and holds it until t ends, cleanups included. A
// test with parallel subtests must not take a turn (its subtests would
// wait for one it holds): it calls Idle. Without Use it is t.Parallel.
func Parallel(t *testing.T) {
	t.Helper()
	t.Parallel()
	if turns == nil {
		return
	}
	turns <- struct{}{}
	t.Cleanup(func() { <-turns })
}

// Idle runs t in parallel with the other tests without a turn: for a test
// that mostly waits (holding a page or a request open), so that the
// others work meanwhile, and for a test whose work is in parallel
// subtests, which take the turns.
func Idle(t *testing.T) {
	t.Helper()
	t.Parallel()
}
