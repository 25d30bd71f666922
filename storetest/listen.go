package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
)

// listenTimeout bounds how long a test waits for ListenEvents to report.
const listenTimeout = 15 * time.Second

// listener records what ListenEvents reports.
type listener struct {
	mu      sync.Mutex
	reports []int64
	changed chan struct{} // closed and replaced at each report
	done    chan error    // ListenEvents' return
}

// listen runs s.ListenEvents(after) until the test ends or stop is called,
// and records every upTo it reports. It skips the test when s is not an
// EventListener.
func listen(t *testing.T, s hitl.Store, after int64) (l *listener, stop func()) {
	t.Helper()
	el, ok := s.(hitl.EventListener)
	if !ok {
		t.Skip("the store is not an EventListener (one process only)")
	}
	ctx, cancel := context.WithCancel(t.Context())
	l = &listener{changed: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		l.done <- el.ListenEvents(ctx, after, func(upTo int64) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.reports = append(l.reports, upTo)
			close(l.changed)
			l.changed = make(chan struct{})
		})
	}()
	t.Cleanup(cancel)
	return l, cancel
}

// awaitAtLeast waits until a report covers seq, and returns the reports
// so far.
func (l *listener) awaitAtLeast(t *testing.T, seq int64) []int64 {
	t.Helper()
	timeout := time.After(listenTimeout)
	for {
		l.mu.Lock()
		reports, changed := append([]int64(nil), l.reports...), l.changed
		l.mu.Unlock()
		if n := len(reports); n > 0 && reports[n-1] >= seq {
			return reports
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("ListenEvents reported %v within %s, want a report of at least %d", reports, listenTimeout, seq)
		}
	}
}

// checkReports checks that reports only grow, from above after.
func checkReports(t *testing.T, reports []int64, after int64) {
	t.Helper()
	prev := after
	for _, r := range reports {
		if r <= prev {
			t.Errorf("ListenEvents reported %v after %d: want each report above the one before and above after", reports, after)
			return
		}
		prev = r
	}
}

// Events committed before ListenEvents starts, after its starting point,
// are reported: a replica that starts listening late catches up.
func testListenCatchesUp(t *testing.T, s hitl.Store) {
	first := create(t, s, askAt(t, at(0), 60))
	start, err := s.LastEventSeq(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ev := appendNotified(t, s, first.ID)
	l, _ := listen(t, s, start)
	checkReports(t, l.awaitAtLeast(t, ev.Seq), start)
}

// Every event committed while listening is reported, in growing upTo, and
// ListenEvents returns nil once its context ends.
func testListenReportsCommits(t *testing.T, s hitl.Store) {
	start, err := s.LastEventSeq(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	l, stop := listen(t, s, start)
	var last int64
	for i := range 3 {
		in := create(t, s, askAt(t, at(i), 60))
		last = appendNotified(t, s, in.ID).Seq
		l.awaitAtLeast(t, last)
	}
	stop()
	select {
	case err := <-l.done:
		if err != nil {
			t.Errorf("ListenEvents after its context ended: %v, want nil", err)
		}
	case <-time.After(listenTimeout):
		t.Fatalf("ListenEvents did not return within %s of its context ending", listenTimeout)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	checkReports(t, l.reports, start)
	if got := l.reports[len(l.reports)-1]; got < last {
		t.Errorf("last report %d, want at least %d", got, last)
	}
}

// appendNotified appends a notified event for the interaction id.
func appendNotified(t *testing.T, s hitl.Store, id string) *hitl.Event {
	t.Helper()
	ev, err := s.AppendEvent(t.Context(), &hitl.Event{Type: hitl.EventNotified, InteractionID: id, At: at(1)})
	if err != nil {
		t.Fatalf("AppendEvent: %v", err)
	}
	return ev
}
