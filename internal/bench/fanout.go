package bench

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// fanout follows many WebSocket subscribers: when each has its replay of
// the pending questions, and when each fan-out question reaches each.
type fanout struct {
	n       int
	origin  time.Time
	ready   atomic.Int64
	readyCh chan struct{}
	readers sync.WaitGroup

	start    []atomic.Int64 // per trial: create sent, ns since origin
	arrivals [][]int64      // per trial, per subscriber: ns since origin
	got      []atomic.Int64 // per trial: subscribers it reached
	done     []chan struct{}
	closed   atomic.Int64 // readers that stopped early
	why      atomic.Value // string: why the first of them stopped
}

func newFanout(subscribers, trials int) *fanout {
	f := &fanout{
		n:        subscribers,
		origin:   time.Now(),
		readyCh:  make(chan struct{}),
		start:    make([]atomic.Int64, trials),
		arrivals: make([][]int64, trials),
		got:      make([]atomic.Int64, trials),
		done:     make([]chan struct{}, trials),
	}
	for t := range trials {
		f.arrivals[t] = make([]int64, subscribers)
		f.done[t] = make(chan struct{})
	}
	return f
}

// read reads subscriber i's messages until its connection closes.
// Questions from tag are the replay; from tag-fanout, the trials. It reads
// the server's JSON by pattern rather than decoding it: ten thousand
// readers share the server's two cores, and a full decode of every
// message would weigh on the fan-out being measured.
func (f *fanout) read(ws *wsConn, i int, tag string) {
	replay := []byte(`"source_agent":"` + tag + `"`)
	trial := []byte(`"question":"bench ` + tag + `-fanout #`)
	replayed := 0
	for {
		payload, err := ws.next()
		if err != nil {
			if f.closed.Add(1) == 1 {
				f.why.Store(err.Error())
			}
			return
		}
		now := int64(time.Since(f.origin))
		if !isQuestion(payload) {
			continue
		}
		if j := bytes.Index(payload, trial); j >= 0 {
			t := trialOf(payload[j+len(trial):])
			if t < 0 || t >= len(f.arrivals) {
				continue
			}
			f.arrivals[t][i] = now
			if f.got[t].Add(1) == int64(f.n) {
				close(f.done[t])
			}
		} else if bytes.Contains(payload, replay) {
			replayed++
			if replayed == streamQuestions && f.ready.Add(1) == int64(f.n) {
				close(f.readyCh)
			}
		}
	}
}

// close closes the subscribers' connections (subs, as openSubscribers
// filled it) and waits until their readers have stopped.
func (f *fanout) close(subs []*wsConn) {
	for _, ws := range subs {
		if ws != nil {
			ws.Close()
		}
	}
	f.readers.Wait()
}

// disconnected says how many subscribers stopped early, and why the first
// did.
func (f *fanout) disconnected() string {
	n := f.closed.Load()
	if n == 0 {
		return "none disconnected"
	}
	why, _ := f.why.Load().(string)
	return fmt.Sprintf("%d disconnected, the first: %s", n, why)
}

// trialOf parses the number at the start of b ("7: deploy…"), or returns
// -1.
func trialOf(b []byte) int {
	n, digits := 0, 0
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		n, digits = n*10+int(c-'0'), digits+1
	}
	if digits == 0 || digits > 6 {
		return -1
	}
	return n
}

// awaitReady waits until every subscriber has its replay.
func (f *fanout) awaitReady(ctx context.Context, bound time.Duration) error {
	select {
	case <-f.readyCh:
		return nil
	case <-time.After(bound):
		return fmt.Errorf("only %d of %d subscribers got their replay within %s (%s)", f.ready.Load(), f.n, bound, f.disconnected())
	case <-ctx.Done():
		return ctx.Err()
	}
}

// begin records that trial t's question is being sent now.
func (f *fanout) begin(t int, at time.Time) {
	f.start[t].Store(int64(at.Sub(f.origin)))
}

// await waits until trial t's question reached every subscriber and
// returns each one's latency, sorted.
func (f *fanout) await(ctx context.Context, t int, bound time.Duration) ([]time.Duration, error) {
	select {
	case <-f.done[t]:
	case <-time.After(bound):
		return nil, fmt.Errorf("question %d reached %d of %d subscribers within %s (%s)", t, f.got[t].Load(), f.n, bound, f.disconnected())
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	start := f.start[t].Load()
	lat := make([]time.Duration, f.n)
	for i, at := range f.arrivals[t] {
		lat[i] = time.Duration(at - start)
	}
	slices.Sort(lat)
	return lat, nil
}
