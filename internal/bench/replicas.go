package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// replicaAgents is the concurrency of the replicas' round-trip run.
const replicaAgents = 16

// ReplicaFigures are the figures of R servers sharing one PostgreSQL
// database on this machine. They share its cores too, so they show what
// coordination costs, not how far R hosts would scale.
type ReplicaFigures struct {
	Replicas int `json:"replicas"`
	// UnblockP50Ms and UnblockP99Ms are answer → agent unblocked, one agent
	// at a time, asked on one replica, waited on the next and answered on
	// the one after (with two, back on the first): the answer reaches the
	// waiter through the database's notifications.
	UnblockP50Ms float64 `json:"unblock_p50_ms"`
	UnblockP99Ms float64 `json:"unblock_p99_ms"`
	// RoundTrips is round trips per second with Agents agents, agent i
	// asking replica i and waiting on the next; the person's WebSocket is
	// on the first and the answers go to each in turn.
	Agents           int     `json:"agents"`
	RoundTrips       float64 `json:"roundtrips_per_s"`
	LoadUnblockP99Ms float64 `json:"load_unblock_p99_ms"`
	// CPU per round trip of all the replicas, and of the PostgreSQL
	// processes on this machine.
	ServerCPUPerRoundTrip   float64  `json:"server_cpu_us_per_roundtrip"`
	DatabaseCPUPerRoundTrip *float64 `json:"database_cpu_us_per_roundtrip,omitempty"`
	// Fan-out of a question asked on the first replica to Subscribers
	// WebSockets spread over all of them: medians over the trials of the
	// 99th percentile and of the last to be reached.
	Subscribers int      `json:"subscribers"`
	FanoutP99Ms *float64 `json:"fanout_p99_ms,omitempty"`
	FanoutAllMs *float64 `json:"fanout_all_ms,omitempty"`
	LostWakeups int      `json:"lost_wakeups"`
}

// runReplicas measures each count of cfg.Replicas in turn.
func runReplicas(ctx context.Context, cfg Config, res *Result, progress func(string, ...any)) error {
	res.Replicas = map[string]*ReplicaFigures{}
	for _, n := range cfg.Replicas {
		progress("replicas: starting %d servers on one database", n)
		f, err := measureReplicas(ctx, cfg, n, progress)
		if f != nil {
			res.Replicas[strconv.Itoa(n)] = f
			res.LostWakeups += f.LostWakeups
		}
		if err != nil {
			return fmt.Errorf("replicas: %d: %w", n, err)
		}
	}
	return nil
}

// measureReplicas starts n servers on the run's database and measures
// them.
func measureReplicas(ctx context.Context, cfg Config, n int, progress func(string, ...any)) (f *ReplicaFigures, err error) {
	srvs := make([]*Server, 0, n)
	defer func() {
		for _, srv := range srvs {
			if srv.Stop != nil {
				err = errors.Join(err, srv.Stop())
			}
		}
	}()
	for i := range n {
		srv, err := cfg.Launch(ctx, fmt.Sprintf("replica%d-%d", n, i+1))
		if err != nil {
			return nil, err
		}
		srvs = append(srvs, srv)
	}
	f = &ReplicaFigures{Replicas: n, Agents: replicaAgents}
	apis := make([]*api, n)
	for i, srv := range srvs {
		apis[i] = newAPI(srv, 4)
	}
	defer closeAPIs(apis)

	progress("replicas: %d: answer → unblocked across replicas, %d samples", n, cfg.Samples)
	samples := make([]time.Duration, 0, cfg.Samples)
	for i := range cfg.Samples + max(cfg.Samples/10, 5) {
		d, ok, err := unblockVia(ctx, apis[0], apis[1%n], apis[2%n], i)
		switch {
		case err != nil:
			return f, fmt.Errorf("unblock: %w", err)
		case !ok:
			f.LostWakeups++
		case i >= max(cfg.Samples/10, 5):
			samples = append(samples, d)
		}
	}
	d := summarize(samples)
	f.UnblockP50Ms, f.UnblockP99Ms = ms(d.P50), ms(d.P99)

	progress("replicas: %d: round trips with %d agents for %s", n, replicaAgents, cfg.Duration)
	lr, err := roundTrips(ctx, srvs, replicaAgents, cfg.Duration/5, cfg.Duration, postgresCPU)
	f.LostWakeups += lr.Lost
	if err != nil {
		return f, err
	}
	f.RoundTrips, f.LoadUnblockP99Ms = round1(lr.perSecond()), ms(lr.Unblock.P99)
	f.ServerCPUPerRoundTrip = float64(lr.cpuPerRoundTrip(lr.ServerCPU).Microseconds())
	if lr.DatabaseRead {
		f.DatabaseCPUPerRoundTrip = ptr(float64(lr.cpuPerRoundTrip(lr.DatabaseCPU).Microseconds()))
	}
	if cfg.Streams > 0 {
		if err := replicaFanout(ctx, cfg, srvs, apis[0], f, progress); err != nil {
			return f, err
		}
	}
	progress("replicas: %d: unblock p50 %.3f ms p99 %.3f ms; %.0f round trips/s; %d lost wake-ups",
		n, f.UnblockP50Ms, f.UnblockP99Ms, f.RoundTrips, f.LostWakeups)
	return f, nil
}

// replicaFanout opens cfg.Streams WebSockets spread over srvs and times
// questions asked on the first replica to every one of them.
func replicaFanout(ctx context.Context, cfg Config, srvs []*Server, a *api, f *ReplicaFigures, progress func(string, ...any)) error {
	n := cfg.Streams
	if cfg.FileLimit > 0 {
		n = min(n, int(cfg.FileLimit/2)-128)
	}
	tag := fmt.Sprintf("replicas-%d", time.Now().UnixNano())
	var created []string
	defer func() { cancelAll(context.WithoutCancel(ctx), a, created) }()
	for i := range streamQuestions {
		id, err := a.create(ctx, tag, i)
		if err != nil {
			return err
		}
		created = append(created, id)
	}
	progress("replicas: %d: opening %d WebSockets", len(srvs), n)
	fan := newFanout(n, cfg.FanoutTrials)
	subs := make([]*wsConn, n)
	defer fan.close(subs)
	if err := openSubscribers(ctx, srvs, fan, tag, 0, subs); err != nil {
		return err
	}
	p99s, lasts := make([]float64, 0, cfg.FanoutTrials), make([]float64, 0, cfg.FanoutTrials)
	for t := range cfg.FanoutTrials {
		id, lat, err := fanOutOnce(ctx, a, fan, tag, t)
		if id != "" {
			created = append(created, id)
		}
		if err != nil {
			return fmt.Errorf("fan-out: %w", err)
		}
		d := summarize(lat)
		p99s, lasts = append(p99s, ms(d.P99)), append(lasts, ms(d.Max))
		time.Sleep(100 * time.Millisecond)
	}
	f.Subscribers, f.FanoutP99Ms, f.FanoutAllMs = n, ptr(median(p99s)), ptr(median(lasts))
	return nil
}
