package bench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"
)

// floorRoundTrips runs c agents against the bare answer loop (loopServer,
// in this process, its database in dir) for warm+window: each agent
// creates, hands the id to one of c responders, and long-polls until the
// answer releases it. It is the throughput floor the load runs of hitl are
// compared with: the least work a durable answer loop can do at that
// concurrency on this machine; with loopQuestions, the least work one that
// also commits each question before giving out its id can do; loopPushed
// is driven as hitl is (floorPushedRoundTrips). The CPU it reports is this
// process's, the loop's server and its driver together.
func floorRoundTrips(ctx context.Context, dir string, c int, kind loopKind, warm, window time.Duration) (loadResult, error) {
	switch kind {
	case loopPushed:
		return floorPushedRoundTrips(ctx, dir, c, warm, window)
	case loopRows:
		return floorRowsRoundTrips(ctx, dir, c, warm, window)
	}
	name := fmt.Sprintf("floor-load-c%d.db", c)
	if kind == loopQuestions {
		name = fmt.Sprintf("floor-load-durable-create-c%d.db", c)
	}
	s, err := startLoopServer(ctx, filepath.Join(dir, name), kind)
	if err != nil {
		return loadResult{}, err
	}
	defer s.close()
	srv := &Server{URL: s.URL()}
	agentAPI, personAPI := newAPI(srv, 2*c+8), newAPI(srv, c+8)
	defer agentAPI.close()
	defer personAPI.close()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	origin := time.Now()
	start, end := origin.Add(warm), origin.Add(warm+window)
	work := make(chan string, c)
	var (
		mu         sync.Mutex
		roundtrips []time.Duration
		people     sync.WaitGroup
		agents     sync.WaitGroup
	)
	for range c {
		people.Go(func() {
			for id := range work {
				if err := personAPI.respond(ctx, id); err != nil && ctx.Err() == nil {
					cancel(fmt.Errorf("respond: %w", err))
				}
			}
		})
	}
	for i := range c {
		agents.Go(func() {
			for n := i; time.Now().Before(end) && ctx.Err() == nil; n += c {
				t0 := time.Now()
				id, err := agentAPI.create(ctx, "floor", n)
				if err == nil {
					work <- id
					var st string
					if st, err = agentAPI.wait(ctx, id, pollTimeout); err == nil && st != "answered" {
						err = fmt.Errorf("interaction %s still %s after %s", id, st, pollTimeout)
					}
				}
				if err != nil {
					if ctx.Err() == nil {
						cancel(err)
					}
					return
				}
				if t1 := time.Now(); t1.After(start) && t1.Before(end) {
					mu.Lock()
					roundtrips = append(roundtrips, t1.Sub(t0))
					mu.Unlock()
				}
			}
		})
	}
	cpu := selfCPUWindow(ctx, start, end)
	agents.Wait()
	close(work)
	people.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return loadResult{}, fmt.Errorf("floor round trips at concurrency %d: %w", c, err)
	} else if err != nil {
		return loadResult{}, err
	}
	return loadResult{
		Concurrency: c,
		RoundTrips:  len(roundtrips),
		Window:      window,
		RoundTrip:   summarize(roundtrips),
		DriverCPU:   cpu[1] - cpu[0],
		roundtrips:  roundtrips,
	}, nil
}

// selfCPUWindow reads this process's CPU time at start and at end (or
// until ctx ends).
func selfCPUWindow(ctx context.Context, start, end time.Time) [2]time.Duration {
	var cpu [2]time.Duration
	select {
	case <-time.After(time.Until(start)):
		cpu[0] = selfCPU()
		select {
		case <-time.After(time.Until(end)):
			cpu[1] = selfCPU()
		case <-ctx.Done():
		}
	case <-ctx.Done():
	}
	return cpu
}
