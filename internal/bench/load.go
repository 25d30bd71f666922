package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// loadResult is one round-trip run at a fixed concurrency.
type loadResult struct {
	Concurrency int
	RoundTrips  int           // completed in the measured window
	Window      time.Duration // the measured window
	Unblock     dist          // answer sent → agent's wait returned
	RoundTrip   dist          // create sent → agent's wait returned
	Lost        int           // lost wake-ups, warm-up included
	Reconnects  int           // times the person's WebSocket was dropped and reopened
	LastDrop    string        // why it was last dropped
	// ServerCPU and DriverCPU are the CPU time the server process and this
	// process used in the window (0 when the server's is unknown).
	ServerCPU, DriverCPU time.Duration
	// DatabaseCPU is the CPU time the PostgreSQL processes on this machine
	// used in the window; DatabaseRead says it could be read.
	DatabaseCPU  time.Duration
	DatabaseRead bool
}

// cpuPerRoundTrip returns CPU time per round trip in the window.
func (r loadResult) cpuPerRoundTrip(cpu time.Duration) time.Duration {
	if r.RoundTrips == 0 {
		return 0
	}
	return cpu / time.Duration(r.RoundTrips)
}

// perSecond returns the round trips per second.
func (r loadResult) perSecond() float64 {
	if r.Window <= 0 {
		return 0
	}
	return float64(r.RoundTrips) / r.Window.Seconds()
}

// answer is when a person sent an answer and when the server accepted it
// (nanoseconds since the run's origin; 0 until the 200 arrives).
type answer struct {
	sent     time.Time
	accepted atomic.Int64
}

// roundTrips runs c agents and one person for warm+window. Each agent
// loops: create a question, long-poll it until answered. The person holds
// one WebSocket; every question of this run that arrives on it is answered
// at once by one of c responders. A round trip counts when the agent's wait
// returns answered inside the window. A lost wake-up is a wait that did not
// return within lostBound of its answer being accepted. dbCPU, when not
// nil, reads the database's CPU time (PostgreSQL on this machine).
func roundTrips(ctx context.Context, srv *Server, c int, warm, window time.Duration, dbCPU func() (time.Duration, bool)) (loadResult, error) {
	origin := time.Now()
	tag := fmt.Sprintf("load-c%d-%d", c, origin.UnixNano())
	agentAPI := newAPI(srv, 2*c+8)
	defer agentAPI.close()
	personAPI := newAPI(srv, c+8)
	defer personAPI.close()

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	first, err := subscribe(ctx, srv)
	if err != nil {
		return loadResult{}, fmt.Errorf("round trips: %w", err)
	}
	var answers sync.Map // interaction id → *answer

	// The person: answer every question of this run as it arrives. The
	// server drops a WebSocket that falls too far behind (on a busy
	// machine the stream can stall); like any client, the person then
	// reconnects, and the replay brings every question still pending.
	work := make(chan string, 1<<16)
	var (
		personMu   sync.Mutex
		sub        = first
		stopped    bool
		reconnects atomic.Int64
		lastDrop   string // why the person's WebSocket last closed
	)
	go func() {
		defer close(work)
		for {
			for q := range sub.questions {
				if q.msg.SourceAgent == tag {
					work <- q.msg.InteractionID
				}
			}
			personMu.Lock()
			if stopped || ctx.Err() != nil {
				personMu.Unlock()
				return
			}
			lastDrop = fmt.Sprint(sub.err)
			if reconnects.Add(1) > maxReconnects {
				personMu.Unlock()
				cancel(fmt.Errorf("the person's WebSocket closed %d times; last: %v", maxReconnects, sub.err))
				return
			}
			next, err := subscribe(ctx, srv)
			if err != nil {
				personMu.Unlock()
				cancel(fmt.Errorf("the person's WebSocket closed (%v) and reconnecting failed: %w", sub.err, err))
				return
			}
			sub = next
			personMu.Unlock()
		}
	}()
	var people sync.WaitGroup
	for range c {
		people.Go(func() {
			for id := range work {
				ans := &answer{sent: time.Now()}
				if _, dup := answers.LoadOrStore(id, ans); dup {
					continue // replayed after a reconnect, already being answered
				}
				if err := personAPI.respond(ctx, id); err != nil {
					var se *statusError
					if errors.As(err, &se) && se.status == http.StatusConflict && reconnects.Load() > 0 {
						continue // replayed while its answer was on the way
					}
					if ctx.Err() == nil {
						cancel(fmt.Errorf("respond: %w", err))
					}
					continue
				}
				ans.accepted.Store(int64(time.Since(origin)))
			}
		})
	}

	// The agents.
	start, end := origin.Add(warm), origin.Add(warm+window)
	var (
		mu         sync.Mutex
		unblocks   []time.Duration
		roundtrips []time.Duration
		lost       atomic.Int64
		agents     sync.WaitGroup
	)
	for i := range c {
		agents.Go(func() {
			for n := i; time.Now().Before(end) && ctx.Err() == nil; n += c {
				t0 := time.Now()
				id, err := agentAPI.create(ctx, tag, n)
				if err != nil {
					if ctx.Err() == nil {
						cancel(fmt.Errorf("create: %w", err))
					}
					return
				}
				ub, counted, err := awaitAnswer(ctx, agentAPI, id, &answers, origin)
				if err != nil {
					if ctx.Err() == nil {
						cancel(err)
					}
					return
				}
				t1 := time.Now()
				if counted {
					lost.Add(1)
				} else if t1.After(start) && t1.Before(end) {
					mu.Lock()
					unblocks = append(unblocks, ub)
					roundtrips = append(roundtrips, t1.Sub(t0))
					mu.Unlock()
				}
			}
		})
	}
	// CPU use over the window.
	var serverCPU, driverCPU, databaseCPU [2]time.Duration
	var databaseRead [2]bool
	cpuAt := func(i int) {
		if srv.PID != 0 {
			serverCPU[i], _ = processCPU(srv.PID)
		}
		driverCPU[i] = selfCPU()
		if dbCPU != nil {
			databaseCPU[i], databaseRead[i] = dbCPU()
		}
	}
	select {
	case <-time.After(time.Until(start)):
		cpuAt(0)
		select {
		case <-time.After(time.Until(end)):
			cpuAt(1)
		case <-ctx.Done():
		}
	case <-ctx.Done():
	}
	agents.Wait()
	personMu.Lock()
	stopped = true
	personMu.Unlock()
	sub.close()
	people.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return loadResult{}, fmt.Errorf("round trips at concurrency %d: %w", c, err)
	} else if err != nil {
		return loadResult{}, err
	}
	return loadResult{
		Concurrency:  c,
		RoundTrips:   len(roundtrips),
		Window:       window,
		Unblock:      summarize(unblocks),
		RoundTrip:    summarize(roundtrips),
		Lost:         int(lost.Load()),
		Reconnects:   int(reconnects.Load()),
		LastDrop:     lastDrop,
		ServerCPU:    serverCPU[1] - serverCPU[0],
		DriverCPU:    driverCPU[1] - driverCPU[0],
		DatabaseCPU:  databaseCPU[1] - databaseCPU[0],
		DatabaseRead: databaseRead[0] && databaseRead[1],
	}, nil
}

// maxReconnects bounds how often the person reconnects in one run.
const maxReconnects = 20

// maxAgentWait bounds one agent's wait for its answer.
const maxAgentWait = time.Minute

// awaitAnswer long-polls id until it is answered and returns the time from
// the answer being sent to the wait returning, and whether the wake-up was
// lost (the wait returned, or was still pending, more than lostBound after
// the answer was accepted).
func awaitAnswer(ctx context.Context, a *api, id string, answers *sync.Map, origin time.Time) (time.Duration, bool, error) {
	began := time.Now()
	lost := false
	for {
		st, err := a.wait(ctx, id, pollTimeout)
		if err != nil {
			return 0, lost, fmt.Errorf("wait: %w", err)
		}
		now := time.Now()
		v, ok := answers.Load(id)
		late := false
		if ok {
			acc := v.(*answer).accepted.Load()
			late = acc != 0 && now.Sub(origin)-time.Duration(acc) > lostBound
		}
		switch st {
		case "answered":
			if !ok {
				return 0, lost, fmt.Errorf("interaction %s answered, but not by the benchmark", id)
			}
			answers.Delete(id)
			return now.Sub(v.(*answer).sent), lost || late, nil
		case "pending":
			lost = lost || late
			if now.Sub(began) > maxAgentWait {
				return 0, lost, fmt.Errorf("interaction %s still pending after %s", id, maxAgentWait)
			}
		default:
			return 0, lost, fmt.Errorf("interaction %s is %s", id, st)
		}
	}
}
