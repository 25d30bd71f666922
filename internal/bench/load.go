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

	// unblocks and roundtrips are the samples Unblock and RoundTrip sum
	// up, for mergeLoads.
	unblocks, roundtrips []time.Duration
}

// mergeLoads returns the runs of rs, taken in turns, as one run: their
// round trips, windows and CPU added up, their samples summed up
// together.
func mergeLoads(rs []loadResult) loadResult {
	if len(rs) == 1 {
		return rs[0]
	}
	m := loadResult{DatabaseRead: len(rs) > 0}
	for _, r := range rs {
		m.Concurrency = r.Concurrency
		m.RoundTrips += r.RoundTrips
		m.Window += r.Window
		m.Lost += r.Lost
		m.Reconnects += r.Reconnects
		if r.LastDrop != "" {
			m.LastDrop = r.LastDrop
		}
		m.ServerCPU += r.ServerCPU
		m.DriverCPU += r.DriverCPU
		m.DatabaseCPU += r.DatabaseCPU
		m.DatabaseRead = m.DatabaseRead && r.DatabaseRead
		m.unblocks = append(m.unblocks, r.unblocks...)
		m.roundtrips = append(m.roundtrips, r.roundtrips...)
	}
	m.Unblock, m.RoundTrip = summarize(m.unblocks), summarize(m.roundtrips)
	return m
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

// roundTrips runs c agents and one person for warm+window against srvs
// (one server, or replicas sharing a database). Each agent loops: create a
// question, long-poll it until answered; with replicas, agent i asks
// replica i and waits on the next one, so every wake-up crosses replicas. The person holds
// one WebSocket; every question of this run that arrives on it is answered
// at once by one of c responders. A round trip counts when the agent's wait
// returns answered inside the window. A lost wake-up is a wait that did not
// return within lostBound of its answer being accepted. dbCPU, when not
// nil, reads the database's CPU time (PostgreSQL on this machine). The
// person's WebSocket is on the first server; its answers go to each in turn.
func roundTrips(ctx context.Context, srvs []*Server, c int, warm, window time.Duration, dbCPU func() (time.Duration, bool)) (loadResult, error) {
	origin := time.Now()
	r := &loadRun{
		srvs:   srvs,
		c:      c,
		origin: origin,
		tag:    fmt.Sprintf("load-c%d-%d", c, origin.UnixNano()),
		start:  origin.Add(warm),
		end:    origin.Add(warm + window),
	}
	for _, srv := range srvs {
		r.agentAPIs = append(r.agentAPIs, newAPI(srv, 2*c+8))
		r.personAPIs = append(r.personAPIs, newAPI(srv, c+8))
	}
	defer closeAPIs(r.agentAPIs)
	defer closeAPIs(r.personAPIs)
	ctx, r.cancel = context.WithCancelCause(ctx)
	defer r.cancel(nil)

	first, err := subscribe(ctx, srvs[0])
	if err != nil {
		return loadResult{}, fmt.Errorf("round trips: %w", err)
	}
	r.sub = first
	work := make(chan string, 1<<16)
	go r.person(ctx, work)
	var people, agents sync.WaitGroup
	for k := range c {
		people.Go(func() { r.answer(ctx, r.personAPIs[k%len(srvs)], work) })
	}
	for i := range c {
		agents.Go(func() { r.agent(ctx, i) })
	}
	cpu := r.measureCPU(ctx, dbCPU)
	agents.Wait()
	r.personMu.Lock()
	r.stopped = true
	r.personMu.Unlock()
	r.sub.close()
	people.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return loadResult{}, fmt.Errorf("round trips at concurrency %d: %w", c, err)
	} else if err != nil {
		return loadResult{}, err
	}
	return loadResult{
		Concurrency:  c,
		RoundTrips:   len(r.roundtrips),
		Window:       window,
		Unblock:      summarize(r.unblocks),
		RoundTrip:    summarize(r.roundtrips),
		unblocks:     r.unblocks,
		roundtrips:   r.roundtrips,
		Lost:         int(r.lost.Load()),
		Reconnects:   int(r.reconnects.Load()),
		LastDrop:     r.lastDrop,
		ServerCPU:    cpu.server[1] - cpu.server[0],
		DriverCPU:    cpu.driver[1] - cpu.driver[0],
		DatabaseCPU:  cpu.database[1] - cpu.database[0],
		DatabaseRead: cpu.databaseRead[0] && cpu.databaseRead[1],
	}, nil
}

// loadRun is the state of one roundTrips run.
type loadRun struct {
	srvs                  []*Server
	c                     int
	origin                time.Time
	tag                   string    // the source_agent of this run's questions
	agentAPIs, personAPIs []*api    // one per server
	start, end            time.Time // the measured window
	cancel                context.CancelCauseFunc

	answers sync.Map // interaction id → *answer

	personMu   sync.Mutex
	sub        *subscriber // the person's WebSocket
	stopped    bool
	reconnects atomic.Int64
	lastDrop   string // why the person's WebSocket last closed

	mu         sync.Mutex
	unblocks   []time.Duration
	roundtrips []time.Duration
	lost       atomic.Int64
}

// person passes every question of this run that arrives on the person's
// WebSocket to work. The server drops a WebSocket that falls too far
// behind (on a busy machine the stream can stall); like any client, the
// person then reconnects, and the replay brings every question still
// pending.
func (r *loadRun) person(ctx context.Context, work chan<- string) {
	defer close(work)
	for {
		for q := range r.sub.questions {
			if q.msg.SourceAgent == r.tag {
				work <- q.msg.InteractionID
			}
		}
		r.personMu.Lock()
		if r.stopped || ctx.Err() != nil {
			r.personMu.Unlock()
			return
		}
		r.lastDrop = fmt.Sprint(r.sub.err)
		if r.reconnects.Add(1) > maxReconnects {
			r.personMu.Unlock()
			r.cancel(fmt.Errorf("the person's WebSocket closed %d times; last: %v", maxReconnects, r.sub.err))
			return
		}
		next, err := subscribe(ctx, r.srvs[0])
		if err != nil {
			r.personMu.Unlock()
			r.cancel(fmt.Errorf("the person's WebSocket closed (%v) and reconnecting failed: %w", r.sub.err, err))
			return
		}
		r.sub = next
		r.personMu.Unlock()
	}
}

// answer answers the questions from work through a, each once.
func (r *loadRun) answer(ctx context.Context, a *api, work <-chan string) {
	for id := range work {
		ans := &answer{sent: time.Now()}
		if _, dup := r.answers.LoadOrStore(id, ans); dup {
			continue // replayed after a reconnect, already being answered
		}
		if err := a.respond(ctx, id); err != nil {
			var se *statusError
			if errors.As(err, &se) && se.status == http.StatusConflict && r.reconnects.Load() > 0 {
				continue // replayed while its answer was on the way
			}
			if ctx.Err() == nil {
				r.cancel(fmt.Errorf("respond: %w", err))
			}
			continue
		}
		ans.accepted.Store(int64(time.Since(r.origin)))
	}
}

// agent is agent i: it asks and waits until the window ends, recording
// the round trips that end inside it.
func (r *loadRun) agent(ctx context.Context, i int) {
	asks, waits := r.agentAPIs[i%len(r.srvs)], r.agentAPIs[(i+1)%len(r.srvs)]
	for n := i; time.Now().Before(r.end) && ctx.Err() == nil; n += r.c {
		t0 := time.Now()
		id, err := asks.create(ctx, r.tag, n)
		if err != nil {
			if ctx.Err() == nil {
				r.cancel(fmt.Errorf("create: %w", err))
			}
			return
		}
		ub, counted, err := awaitAnswer(ctx, waits, id, &r.answers, r.origin)
		if err != nil {
			if ctx.Err() == nil {
				r.cancel(err)
			}
			return
		}
		t1 := time.Now()
		if counted {
			r.lost.Add(1)
		} else if t1.After(r.start) && t1.Before(r.end) {
			r.mu.Lock()
			r.unblocks = append(r.unblocks, ub)
			r.roundtrips = append(r.roundtrips, t1.Sub(t0))
			r.mu.Unlock()
		}
	}
}

// windowCPU is CPU time read at the window's start [0] and end [1].
type windowCPU struct {
	server, driver, database [2]time.Duration
	databaseRead             [2]bool
}

// measureCPU reads the CPU times at the window's start and end (or until
// ctx ends).
func (r *loadRun) measureCPU(ctx context.Context, dbCPU func() (time.Duration, bool)) windowCPU {
	var w windowCPU
	at := func(i int) {
		for _, srv := range r.srvs {
			w.server[i] += serverCPU(srv)
		}
		w.driver[i] = selfCPU()
		if dbCPU != nil {
			w.database[i], w.databaseRead[i] = dbCPU()
		}
	}
	select {
	case <-time.After(time.Until(r.start)):
		at(0)
		select {
		case <-time.After(time.Until(r.end)):
			at(1)
		case <-ctx.Done():
		}
	case <-ctx.Done():
	}
	return w
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

// closeAPIs closes each client.
func closeAPIs(apis []*api) {
	for _, a := range apis {
		a.close()
	}
}
