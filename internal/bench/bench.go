// Package bench measures a hitl server end to end over real HTTP and
// WebSocket connections on loopback — an answer reaching a blocked agent, a
// question reaching a person, round trips under load, memory and fan-out at
// scale — next to the floor of the machine it runs on, measured in the same
// run: a bare loopback HTTP round trip, a bare durable SQLite commit (back
// to back, and after a pause), and the answer → unblock loop against the
// least server that does it durably.
//
// It is the engine of "hitl bench"; see BENCHMARKS.md for the figures.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Config says what to run. Zero counts mean the full run's defaults.
type Config struct {
	// Launch starts a fresh server for a phase ("latency", "pending",
	// "streams"), stopped by the phase when done. Required.
	Launch func(ctx context.Context, phase string) (*Server, error)
	// Store names the store under test in the report.
	Store string
	// Dir is a directory on the same disk as the server's database, for
	// the floor commit; "" skips the floor commit.
	Dir string
	// PostgresURL, when set, is the PostgreSQL database the servers use:
	// the floor commit is then measured there, not in Dir.
	PostgresURL string

	Samples  int           // sequential unblock and notify samples; 0 means 2000
	Duration time.Duration // each round-trip run, after a warm-up of a fifth of it; 0 means 5 s
	// Rounds splits each concurrency's round-trip runs, the floors' and
	// hitl's, into this many rounds that take turns (every floor, then
	// hitl, then again), each for Duration/Rounds after a warm-up of a
	// fifth of that; 0 means 3. A host whose speed drifts (a shared
	// machine) then moves the floors and hitl alike.
	Rounds      int
	Concurrency []int // round-trip concurrencies; nil means 1, 16, 256
	Pending     int   // pending questions, the cost curve's last step; 0 means 10,000; <0 skips
	Ended       int   // answered questions, the history's curve, purged at its end; 0 or <0 skips
	// AllFloors adds, on SQLite, the loop that commits each question but
	// does not push it (between the bare and the pushed loop) to each
	// round-trip run's floors.
	AllFloors    bool
	Replicas     []int         // numbers of replicas to measure on PostgresURL; nil skips
	Streams      int           // long-polls, and WebSocket subscribers; 0 means 10,000; <0 skips
	FanoutTrials int           // questions fanned out to every subscriber; 0 means 10
	Settle       time.Duration // idle time before memory is read; 0 means 2 s
	FileLimit    uint64        // open-file limit of driver and server; 0 means unknown
	// Database returns the database of a phase's server (a SQLite path or
	// a postgres:// URL), whose size the cost curve reads; nil when unknown.
	Database func(phase string) string
	// Purge runs the retention purge of what ended more than olderThan
	// ago on a phase's database; nil skips the purge figure.
	Purge func(ctx context.Context, phase string, olderThan time.Duration) error
	// Shared says the database outlives the run (PostgreSQL, or a running
	// server): the phases then cancel every question they leave pending.
	Shared   bool
	Progress io.Writer        // progress lines; nil discards them
	Quick    bool             // recorded in the result
	Auth     bool             // recorded in the result: requests carry an API token
	now      func() time.Time // for tests; nil means time.Now
}

// Quick returns the reduced counts of "hitl bench --quick", well under a
// minute in all.
func Quick() Config {
	return Config{
		Samples:      300,
		Duration:     2 * time.Second,
		Rounds:       2,
		Pending:      10_000,
		Streams:      1_000,
		FanoutTrials: 5,
		Quick:        true,
	}
}

func (c *Config) defaults() {
	if c.Samples <= 0 {
		c.Samples = 2000
	}
	if c.Duration <= 0 {
		c.Duration = 5 * time.Second
	}
	if c.Rounds <= 0 {
		c.Rounds = 3
	}
	if c.Concurrency == nil {
		c.Concurrency = []int{1, 16, 256}
	}
	if c.Pending == 0 {
		c.Pending = 10_000
	}
	if c.Streams == 0 {
		c.Streams = 10_000
	}
	if c.Settle <= 0 {
		c.Settle = defaultSettle
	}
	if c.FanoutTrials <= 0 {
		c.FanoutTrials = 10
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
}

// Result is one run's figures. Times are in milliseconds, memory in MiB.
// Figures that were not measured are null.
type Result struct {
	Store string `json:"store"`
	Quick bool   `json:"quick"`
	// Auth says the servers had authentication on and every request
	// carried an API token; otherwise they ran in local mode.
	Auth bool `json:"auth"`

	UnblockP50 *float64 `json:"unblock_p50_ms"`
	UnblockP95 *float64 `json:"unblock_p95_ms"`
	UnblockP99 *float64 `json:"unblock_p99_ms"`
	NotifyP50  *float64 `json:"notify_p50_ms"`
	NotifyP99  *float64 `json:"notify_p99_ms"`

	// RoundTrips is keyed by concurrency: "1", "16", "256".
	RoundTrips    map[string]float64 `json:"roundtrips_per_s"`
	UnblockP99C16 *float64           `json:"unblock_p99_ms_c16"`
	// UnblockP99ByConcurrency is the answer → unblock p99 of each load run.
	UnblockP99ByConcurrency map[string]float64 `json:"unblock_p99_ms_by_concurrency"`
	// RoundTripP99ByConcurrency is create → answered p99 of each load run.
	RoundTripP99ByConcurrency map[string]float64 `json:"roundtrip_p99_ms_by_concurrency"`
	LostWakeups               int                `json:"lost_wakeups"`
	// PersonReconnects counts the times the server dropped the answering
	// person's WebSocket as too slow during the load runs (it reconnects
	// and gets the replay, as a browser does).
	PersonReconnects int `json:"person_reconnects"`
	// ServerCPUPerRoundTrip and DriverCPUPerRoundTrip are the CPU time (µs)
	// the server process and the benchmark used per round trip, by
	// concurrency: on a machine this size they share the cores.
	ServerCPUPerRoundTrip map[string]float64 `json:"server_cpu_us_per_roundtrip"`
	DriverCPUPerRoundTrip map[string]float64 `json:"driver_cpu_us_per_roundtrip"`
	// FloorRoundTrips is the bare answer loop's round trips per second at
	// each concurrency (floorload.go), measured in the same run with a
	// SQLite store; RoundTripsVsFloor is RoundTrips over it, and
	// FloorCPUPerRoundTrip the loop's CPU (µs, its server and driver in
	// one process) per round trip.
	FloorRoundTrips      map[string]float64 `json:"floor_roundtrips_per_s,omitempty"`
	RoundTripsVsFloor    map[string]float64 `json:"roundtrips_vs_floor,omitempty"`
	FloorCPUPerRoundTrip map[string]float64 `json:"floor_cpu_us_per_roundtrip,omitempty"`
	// FloorDurableCreateRoundTrips and the two after it are the same for
	// the bare loop that also commits each question before giving out
	// its id, as hitl does: two commits to wait for per round trip, not one.
	FloorDurableCreateRoundTrips      map[string]float64 `json:"floor_durable_create_roundtrips_per_s,omitempty"`
	RoundTripsVsFloorDurableCreate    map[string]float64 `json:"roundtrips_vs_floor_durable_create,omitempty"`
	FloorDurableCreateCPUPerRoundTrip map[string]float64 `json:"floor_durable_create_cpu_us_per_roundtrip,omitempty"`
	// FloorPushedRoundTrips and the two after it are the same for the
	// loop that also pushes each committed question to the person's
	// WebSocket, driven as hitl is (the person answers what arrives
	// there): the least a server can do for hitl's loop.
	FloorPushedRoundTrips      map[string]float64 `json:"floor_pushed_roundtrips_per_s,omitempty"`
	RoundTripsVsFloorPushed    map[string]float64 `json:"roundtrips_vs_floor_pushed,omitempty"`
	FloorPushedCPUPerRoundTrip map[string]float64 `json:"floor_pushed_cpu_us_per_roundtrip,omitempty"`
	// RoundTripsVsFloorPushedRounds is hitl's ratio to the pushed loop in
	// each round (Config.Rounds), in order: how far the host's drift
	// moves the merged ratio above.
	RoundTripsVsFloorPushedRounds map[string][]float64 `json:"roundtrips_vs_floor_pushed_rounds,omitempty"`
	// FloorRowsRoundTrips and the two after it are the same for the
	// pushed loop writing hitl's own record of each question and answer
	// (floorrows.go): hitl's schema, row and events. Between the pushed
	// loop and it is what that record costs; between it and hitl, what
	// hitl's server does besides.
	FloorRowsRoundTrips      map[string]float64 `json:"floor_rows_roundtrips_per_s,omitempty"`
	RoundTripsVsFloorRows    map[string]float64 `json:"roundtrips_vs_floor_rows,omitempty"`
	FloorRowsCPUPerRoundTrip map[string]float64 `json:"floor_rows_cpu_us_per_roundtrip,omitempty"`
	// DatabaseCPUPerRoundTrip is the same for the PostgreSQL processes on
	// this machine, with --db (they are also in OtherCPUSeconds).
	DatabaseCPUPerRoundTrip map[string]float64 `json:"database_cpu_us_per_roundtrip,omitempty"`
	// PGFloorRoundTrips is, with --db, the PostgreSQL floor's round trips
	// per second at each concurrency (floorpostgres.go: the pushed loop on
	// the same database, one INSERT per question and one compare-and-set
	// UPDATE with its NOTIFY per answer); RoundTripsVsPGFloor is
	// RoundTrips over it; PGFloorCPUPerRoundTrip the loop's own CPU (µs,
	// server and driver in one process) and PGFloorDatabaseCPUPerRoundTrip
	// the PostgreSQL processes' per round trip, and DatabaseCPUVsPGFloor
	// hitl's database CPU per round trip over the floor's.
	PGFloorRoundTrips              map[string]float64   `json:"pg_floor_roundtrips_per_s,omitempty"`
	RoundTripsVsPGFloor            map[string]float64   `json:"roundtrips_vs_pg_floor,omitempty"`
	RoundTripsVsPGFloorRounds      map[string][]float64 `json:"roundtrips_vs_pg_floor_rounds,omitempty"` // each round's, as RoundTripsVsFloorPushedRounds
	PGFloorCPUPerRoundTrip         map[string]float64   `json:"pg_floor_cpu_us_per_roundtrip,omitempty"`
	PGFloorDatabaseCPUPerRoundTrip map[string]float64   `json:"pg_floor_database_cpu_us_per_roundtrip,omitempty"`
	DatabaseCPUVsPGFloor           map[string]float64   `json:"database_cpu_vs_pg_floor,omitempty"`
	// PGRowsFloorRoundTrips and the four after it are the same for the
	// PostgreSQL floor writing hitl's rows (floorrowspostgres.go: hitl's
	// schema, and hitl's one statement for a question and for an answer,
	// each with its event and NOTIFY). Between the floor and it is what
	// hitl's record costs the database; between it and hitl, the reads and
	// writes hitl makes besides.
	PGRowsFloorRoundTrips              map[string]float64 `json:"pg_rows_floor_roundtrips_per_s,omitempty"`
	RoundTripsVsPGRowsFloor            map[string]float64 `json:"roundtrips_vs_pg_rows_floor,omitempty"`
	PGRowsFloorCPUPerRoundTrip         map[string]float64 `json:"pg_rows_floor_cpu_us_per_roundtrip,omitempty"`
	PGRowsFloorDatabaseCPUPerRoundTrip map[string]float64 `json:"pg_rows_floor_database_cpu_us_per_roundtrip,omitempty"`
	DatabaseCPUVsPGRowsFloor           map[string]float64 `json:"database_cpu_vs_pg_rows_floor,omitempty"`

	RSS100kPending         *float64 `json:"rss_100k_pending_mib"`
	RSSWaitersSubscribers  *float64 `json:"rss_10k_waiters_10k_subscribers_mib"`
	FanoutP99              *float64 `json:"fanout_10k_p99_ms"`
	FanoutAll              *float64 `json:"fanout_10k_all_ms"`
	PendingCount           int      `json:"pending_count"`
	PendingBaseRSS         *float64 `json:"rss_pending_base_mib"`
	PendingCreatesPerS     float64  `json:"pending_creates_per_s"`
	Waiters                int      `json:"waiters"`
	Subscribers            int      `json:"subscribers"`
	StreamsBaseRSS         *float64 `json:"rss_streams_base_mib"`
	KiBPerWait             *float64 `json:"kib_per_wait"`
	KiBPerSubscriber       *float64 `json:"kib_per_subscriber"`
	RSSStreamsMeasured     *float64 `json:"rss_streams_measured_mib"`
	RSSStreamsExtrapolated bool     `json:"rss_streams_extrapolated"`
	StreamsLostWakeups     int      `json:"streams_lost_wakeups"`

	FloorHTTP      float64  `json:"floor_http_rtt_ms"`
	FloorHTTPP99   float64  `json:"floor_http_rtt_p99_ms"`
	FloorCommit    *float64 `json:"floor_commit_ms"`
	FloorCommitP99 *float64 `json:"floor_commit_p99_ms"`
	// FloorCommitIdle is a bare durable SQLite commit made after the idle
	// pause the sequential unblock figure answers after (settle).
	FloorCommitIdle    *float64 `json:"floor_commit_idle_ms,omitempty"`
	FloorCommitIdleP99 *float64 `json:"floor_commit_idle_p99_ms,omitempty"`
	// FloorLoop is the sequential answer → unblock figure measured against
	// the least server that does it durably (floorloop.go): the same
	// client, HTTP server and SQLite driver, one commit and one wake-up.
	FloorLoop    *float64 `json:"floor_unblock_ms,omitempty"`
	FloorLoopP99 *float64 `json:"floor_unblock_p99_ms,omitempty"`
	// FloorCommitStore is where the floor commit was measured: "sqlite"
	// (a file beside the servers' databases) or "postgres".
	FloorCommitStore string  `json:"floor_commit_store,omitempty"`
	LoadAvgStart     float64 `json:"loadavg_start"`
	LoadAvgEnd       float64 `json:"loadavg_end"`
	// OtherCPUSeconds is the CPU time other processes used during the
	// run (the machine's busy time less the benchmark's and its servers'):
	// how much the measurement shared the machine. A PostgreSQL on this
	// machine counts here too.
	OtherCPUSeconds float64 `json:"other_cpu_s"`
	Started         string  `json:"started"`
	DurationSeconds float64 `json:"duration_s"`

	CurveFigures
	// Replicas is keyed by the number of replicas: "1", "2", "4".
	Replicas map[string]*ReplicaFigures `json:"replicas,omitempty"`
}

// Run runs every phase and returns the figures. A phase that fails stops
// the run; the figures so far are returned with the error.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	cfg.defaults()
	if cfg.Launch == nil {
		return nil, errors.New("bench: Config.Launch is required")
	}
	now := cfg.now
	if now == nil {
		now = time.Now
	}
	began := now()
	progress := func(format string, args ...any) {
		fmt.Fprintf(cfg.Progress, "bench %5.1fs  %s\n", now().Sub(began).Seconds(), fmt.Sprintf(format, args...))
	}
	res := &Result{
		Store:                     cfg.Store,
		Quick:                     cfg.Quick,
		Auth:                      cfg.Auth,
		RoundTrips:                map[string]float64{},
		UnblockP99ByConcurrency:   map[string]float64{},
		RoundTripP99ByConcurrency: map[string]float64{},
		ServerCPUPerRoundTrip:     map[string]float64{},
		DriverCPUPerRoundTrip:     map[string]float64{},
		// The floors' maps stay empty, and out of the JSON, on PostgreSQL.
		FloorRoundTrips:                    map[string]float64{},
		RoundTripsVsFloor:                  map[string]float64{},
		FloorCPUPerRoundTrip:               map[string]float64{},
		FloorDurableCreateRoundTrips:       map[string]float64{},
		RoundTripsVsFloorDurableCreate:     map[string]float64{},
		FloorDurableCreateCPUPerRoundTrip:  map[string]float64{},
		FloorPushedRoundTrips:              map[string]float64{},
		RoundTripsVsFloorPushed:            map[string]float64{},
		RoundTripsVsFloorPushedRounds:      map[string][]float64{},
		RoundTripsVsPGFloorRounds:          map[string][]float64{},
		FloorPushedCPUPerRoundTrip:         map[string]float64{},
		FloorRowsRoundTrips:                map[string]float64{},
		RoundTripsVsFloorRows:              map[string]float64{},
		FloorRowsCPUPerRoundTrip:           map[string]float64{},
		PGFloorRoundTrips:                  map[string]float64{},
		RoundTripsVsPGFloor:                map[string]float64{},
		PGFloorCPUPerRoundTrip:             map[string]float64{},
		PGFloorDatabaseCPUPerRoundTrip:     map[string]float64{},
		DatabaseCPUVsPGFloor:               map[string]float64{},
		PGRowsFloorRoundTrips:              map[string]float64{},
		RoundTripsVsPGRowsFloor:            map[string]float64{},
		PGRowsFloorCPUPerRoundTrip:         map[string]float64{},
		PGRowsFloorDatabaseCPUPerRoundTrip: map[string]float64{},
		DatabaseCPUVsPGRowsFloor:           map[string]float64{},
		LoadAvgStart:                       loadAverage(),
		Started:                            began.UTC().Format(time.RFC3339),
	}
	busy0, own0 := machineBusy(), ownCPU()
	defer func() {
		res.LoadAvgEnd = loadAverage()
		res.DurationSeconds = now().Sub(began).Seconds()
		if other := (machineBusy() - busy0) - (ownCPU() - own0); busy0 > 0 {
			res.OtherCPUSeconds = max(other, 0).Seconds()
		}
	}()

	if err := runFloors(ctx, cfg, res, progress); err != nil {
		return res, err
	}
	if err := runLatency(ctx, cfg, res, progress); err != nil {
		return res, err
	}
	if cfg.Pending > 0 {
		if err := runCurve(ctx, cfg, res, pendingKind, cfg.Pending, progress); err != nil {
			return res, err
		}
	}
	if cfg.Ended > 0 {
		if err := runCurve(ctx, cfg, res, endedKind, cfg.Ended, progress); err != nil {
			return res, err
		}
	}
	if cfg.Streams > 0 {
		if err := runStreams(ctx, cfg, res, progress); err != nil {
			return res, err
		}
	}
	if len(cfg.Replicas) > 0 && cfg.PostgresURL != "" {
		if err := runReplicas(ctx, cfg, res, progress); err != nil {
			return res, err
		}
	}
	progress("done")
	return res, nil
}

// runFloors measures the floors: loopback HTTP, a durable commit of the
// store, and for SQLite the same after idling and the bare answer loop.
func runFloors(ctx context.Context, cfg Config, res *Result, progress func(string, ...any)) error {
	progress("floor: bare loopback HTTP round trips")
	h, err := floorHTTP(ctx, max(cfg.Samples, 1000))
	if err != nil {
		return err
	}
	res.FloorHTTP, res.FloorHTTPP99 = ms(h.P50), ms(h.P99)
	switch {
	case cfg.PostgresURL != "":
		progress("floor: bare durable PostgreSQL commits")
		c, err := floorCommitPostgres(ctx, cfg.PostgresURL, max(cfg.Samples/4, 200))
		if err != nil {
			return err
		}
		res.FloorCommit, res.FloorCommitP99, res.FloorCommitStore = ptr(ms(c.P50)), ptr(ms(c.P99)), "postgres"
		progress("floor: the bare answer loop on PostgreSQL, %d samples", cfg.Samples)
		l, err := postgresFloorLoop(ctx, cfg.PostgresURL, cfg.Samples, progress)
		if err != nil {
			return err
		}
		res.FloorLoop, res.FloorLoopP99 = ptr(ms(l.P50)), ptr(ms(l.P99))
	case cfg.Dir != "":
		progress("floor: bare durable SQLite commits")
		c, err := floorCommit(ctx, cfg.Dir, max(cfg.Samples/4, 200), 0)
		if err != nil {
			return err
		}
		res.FloorCommit, res.FloorCommitP99, res.FloorCommitStore = ptr(ms(c.P50)), ptr(ms(c.P99)), "sqlite"
		progress("floor: bare durable SQLite commits, each after %s idle", settle)
		if c, err = floorCommit(ctx, cfg.Dir, max(cfg.Samples/4, 200), settle); err != nil {
			return err
		}
		res.FloorCommitIdle, res.FloorCommitIdleP99 = ptr(ms(c.P50)), ptr(ms(c.P99))
		progress("floor: the bare answer loop, %d samples", cfg.Samples)
		l, err := floorLoop(ctx, cfg.Dir, cfg.Samples, progress)
		if err != nil {
			return err
		}
		res.FloorLoop, res.FloorLoopP99 = ptr(ms(l.P50)), ptr(ms(l.P99))
	}

	return nil
}

// withServer launches the phase's server, runs fn and stops the server.
func withServer(ctx context.Context, cfg Config, phase string, fn func(srv *Server) error) error {
	srv, err := cfg.Launch(ctx, phase)
	if err != nil {
		return fmt.Errorf("%s: %w", phase, err)
	}
	err = fn(srv)
	if srv.Stop != nil {
		if serr := srv.Stop(); serr != nil && err == nil {
			err = fmt.Errorf("%s: stop server: %w", phase, serr)
		}
	}
	return err
}

// runLatency runs the sequential latency figures and the load runs on one
// server.
func runLatency(ctx context.Context, cfg Config, res *Result, progress func(string, ...any)) error {
	return withServer(ctx, cfg, "latency", func(srv *Server) error {
		progress("unblock: answer → agent unblocked, %d samples, one agent", cfg.Samples)
		d, lost, err := unblock(ctx, srv, cfg.Samples, progress)
		res.LostWakeups += lost
		if err != nil {
			return err
		}
		res.UnblockP50, res.UnblockP95, res.UnblockP99 = ptr(ms(d.P50)), ptr(ms(d.P95)), ptr(ms(d.P99))
		progress("unblock: p50 %.3f ms, p95 %.3f ms, p99 %.3f ms", ms(d.P50), ms(d.P95), ms(d.P99))

		progress("notify: question → WebSocket, %d samples, one subscriber", cfg.Samples)
		d, err = notify(ctx, srv, cfg.Samples, progress)
		if err != nil {
			return err
		}
		res.NotifyP50, res.NotifyP99 = ptr(ms(d.P50)), ptr(ms(d.P99))
		progress("notify: p50 %.3f ms, p99 %.3f ms", ms(d.P50), ms(d.P99))

		var dbCPU func() (time.Duration, bool)
		if cfg.PostgresURL != "" {
			dbCPU = postgresCPU
		}
		for _, c := range cfg.Concurrency {
			lr, err := loadRounds(ctx, cfg, res, srv, c, dbCPU, progress)
			res.LostWakeups += lr.Lost
			if err != nil {
				return err
			}
			key := strconv.Itoa(c)
			res.RoundTrips[key] = lr.perSecond()
			res.UnblockP99ByConcurrency[key] = ms(lr.Unblock.P99)
			res.RoundTripP99ByConcurrency[key] = ms(lr.RoundTrip.P99)
			if c == 16 {
				res.UnblockP99C16 = ptr(ms(lr.Unblock.P99))
			}
			if srv.PID != 0 {
				res.ServerCPUPerRoundTrip[key] = float64(lr.cpuPerRoundTrip(lr.ServerCPU).Microseconds())
			}
			res.DriverCPUPerRoundTrip[key] = float64(lr.cpuPerRoundTrip(lr.DriverCPU).Microseconds())
			if lr.DatabaseRead {
				if res.DatabaseCPUPerRoundTrip == nil {
					res.DatabaseCPUPerRoundTrip = map[string]float64{}
				}
				res.DatabaseCPUPerRoundTrip[key] = float64(lr.cpuPerRoundTrip(lr.DatabaseCPU).Microseconds())
				if f := res.PGFloorDatabaseCPUPerRoundTrip[key]; f > 0 {
					res.DatabaseCPUVsPGFloor[key] = round3(res.DatabaseCPUPerRoundTrip[key] / f)
				}
				if f := res.PGRowsFloorDatabaseCPUPerRoundTrip[key]; f > 0 {
					res.DatabaseCPUVsPGRowsFloor[key] = round3(res.DatabaseCPUPerRoundTrip[key] / f)
				}
			}
			if f := res.FloorRoundTrips[key]; f > 0 {
				res.RoundTripsVsFloor[key] = round3(lr.perSecond() / f)
			}
			if f := res.FloorDurableCreateRoundTrips[key]; f > 0 {
				res.RoundTripsVsFloorDurableCreate[key] = round3(lr.perSecond() / f)
			}
			if f := res.FloorPushedRoundTrips[key]; f > 0 {
				res.RoundTripsVsFloorPushed[key] = round3(lr.perSecond() / f)
			}
			if f := res.FloorRowsRoundTrips[key]; f > 0 {
				res.RoundTripsVsFloorRows[key] = round3(lr.perSecond() / f)
			}
			if f := res.PGFloorRoundTrips[key]; f > 0 {
				res.RoundTripsVsPGFloor[key] = round3(lr.perSecond() / f)
			}
			if f := res.PGRowsFloorRoundTrips[key]; f > 0 {
				res.RoundTripsVsPGRowsFloor[key] = round3(lr.perSecond() / f)
			}
			res.PersonReconnects += lr.Reconnects
			if lr.Reconnects > 0 {
				progress("round trips: concurrency %d: the person's WebSocket was dropped %d times and reconnected (last: %s)", c, lr.Reconnects, lr.LastDrop)
			}
			progress("round trips: concurrency %d: %.0f/s, unblock p99 %.3f ms, round trip p99 %.3f ms, %d lost wake-ups, %d reconnects; CPU per round trip: server %s, driver %s",
				c, lr.perSecond(), ms(lr.Unblock.P99), ms(lr.RoundTrip.P99), lr.Lost, lr.Reconnects,
				lr.cpuPerRoundTrip(lr.ServerCPU).Round(time.Microsecond), lr.cpuPerRoundTrip(lr.DriverCPU).Round(time.Microsecond))
			if lr.DatabaseRead {
				progress("round trips: concurrency %d: CPU per round trip of the PostgreSQL processes on this machine: %s",
					c, lr.cpuPerRoundTrip(lr.DatabaseCPU).Round(time.Microsecond))
			}
		}
		return nil
	})
}

// loadRounds runs the round trips at concurrency c against srv and beside
// them the floors (floorSpecs), in cfg.Rounds rounds that take turns:
// every floor, then hitl, each for Duration/Rounds after a warm-up of a
// fifth of that. It records the floors' results, each merged over the
// rounds, and each round's ratio of hitl to its floor in res, and returns
// hitl's, merged.
func loadRounds(ctx context.Context, cfg Config, res *Result, srv *Server, c int, dbCPU func() (time.Duration, bool), progress func(string, ...any)) (loadResult, error) {
	key := strconv.Itoa(c)
	window := (cfg.Duration / time.Duration(cfg.Rounds)).Round(time.Millisecond)
	specs := floorSpecs(cfg, res)
	floors := make([][]loadResult, len(specs))
	var runs []loadResult
	for round := range cfg.Rounds {
		of := ""
		if cfg.Rounds > 1 {
			of = fmt.Sprintf(", round %d of %d", round+1, cfg.Rounds)
		}
		dir, err := roundDir(cfg.Dir, round)
		if err != nil {
			return loadResult{}, err
		}
		for i, f := range specs {
			progress("floor: %s at concurrency %d for %s%s", f.what, c, window, of)
			fl, err := f.run(ctx, dir, c, window/5, window)
			if err != nil {
				return loadResult{}, err
			}
			floors[i] = append(floors[i], fl)
			progress("floor: %s, concurrency %d%s: %.0f/s, round trip p99 %.3f ms, CPU per round trip %s%s",
				f.what, c, of, fl.perSecond(), ms(fl.RoundTrip.P99), fl.cpuPerRoundTrip(fl.DriverCPU).Round(time.Microsecond), databaseCPUNote(fl))
		}
		progress("round trips: concurrency %d for %s%s", c, window, of)
		lr, err := roundTrips(ctx, []*Server{srv}, c, window/5, window, dbCPU)
		if err != nil {
			return lr, err
		}
		runs = append(runs, lr)
		for i, f := range specs {
			if f.rounds != nil && floors[i][round].perSecond() > 0 {
				f.rounds[key] = append(f.rounds[key], round3(lr.perSecond()/floors[i][round].perSecond()))
			}
		}
	}
	for i, f := range specs {
		fl := mergeLoads(floors[i])
		f.rates[key], f.cpus[key] = fl.perSecond(), float64(fl.cpuPerRoundTrip(fl.DriverCPU).Microseconds())
		if f.db != nil && fl.DatabaseRead {
			f.db[key] = float64(fl.cpuPerRoundTrip(fl.DatabaseCPU).Microseconds())
		}
	}
	return mergeLoads(runs), nil
}

// roundDir returns the directory of a round's floor databases: dir for
// the first, a new directory in it for each other ("" stays "").
func roundDir(dir string, round int) (string, error) {
	if dir == "" || round == 0 {
		return dir, nil
	}
	d := filepath.Join(dir, fmt.Sprintf("round-%d", round+1))
	if err := os.MkdirAll(d, 0o700); err != nil {
		return "", fmt.Errorf("floor: %w", err)
	}
	return d, nil
}

// databaseCPUNote says what the database's CPU per round trip was, when it
// was read.
func databaseCPUNote(fl loadResult) string {
	if !fl.DatabaseRead {
		return ""
	}
	return fmt.Sprintf(", PostgreSQL's %s", fl.cpuPerRoundTrip(fl.DatabaseCPU).Round(time.Microsecond))
}

// floorSpec is one floor of the round-trip runs: how to run it (its
// databases in dir, on SQLite) and where its results go in the Result.
type floorSpec struct {
	what string
	run  floorRun
	// rates and cpus take its round trips a second and CPU per round trip
	// by concurrency; db, when not nil, its database's CPU per round
	// trip; rounds, when not nil, hitl's ratio to it in each round.
	rates, cpus, db map[string]float64
	rounds          map[string][]float64
}

// floorRun runs a floor at concurrency c for warm+window, its SQLite
// databases in dir.
type floorRun func(ctx context.Context, dir string, c int, warm, window time.Duration) (loadResult, error)

// floorSpecs returns the floors of the round-trip runs: on SQLite the
// bare answer loop, the loop that also pushes each question to the
// person's WebSocket, and that loop writing hitl's rows (with AllFloors,
// also the loop that commits each question but does not push it); on
// PostgreSQL the pushed loop there and the one writing hitl's rows.
// Without a directory for SQLite's floors, none.
func floorSpecs(cfg Config, res *Result) []floorSpec {
	if cfg.PostgresURL != "" {
		pg := func(run func(context.Context, string, int, time.Duration, time.Duration) (loadResult, error)) floorRun {
			return func(ctx context.Context, _ string, c int, warm, window time.Duration) (loadResult, error) {
				return run(ctx, cfg.PostgresURL, c, warm, window)
			}
		}
		return []floorSpec{
			{"the bare answer loop on PostgreSQL, each question pushed to the person", pg(postgresFloorRoundTrips),
				res.PGFloorRoundTrips, res.PGFloorCPUPerRoundTrip, res.PGFloorDatabaseCPUPerRoundTrip, res.RoundTripsVsPGFloorRounds},
			{"the PostgreSQL loop writing hitl's rows", pg(postgresRowsFloorRoundTrips),
				res.PGRowsFloorRoundTrips, res.PGRowsFloorCPUPerRoundTrip, res.PGRowsFloorDatabaseCPUPerRoundTrip, nil},
		}
	}
	if cfg.Dir == "" {
		return nil
	}
	sqlite := func(kind loopKind) floorRun {
		return func(ctx context.Context, dir string, c int, warm, window time.Duration) (loadResult, error) {
			return floorRoundTrips(ctx, dir, c, kind, warm, window)
		}
	}
	specs := []floorSpec{{"the bare answer loop", sqlite(loopAnswers), res.FloorRoundTrips, res.FloorCPUPerRoundTrip, nil, nil}}
	if cfg.AllFloors {
		specs = append(specs, floorSpec{"the bare answer loop with each question committed too",
			sqlite(loopQuestions), res.FloorDurableCreateRoundTrips, res.FloorDurableCreateCPUPerRoundTrip, nil, nil})
	}
	return append(specs,
		floorSpec{"the bare answer loop with each question committed and pushed to the person",
			sqlite(loopPushed), res.FloorPushedRoundTrips, res.FloorPushedCPUPerRoundTrip, nil, res.RoundTripsVsFloorPushedRounds},
		floorSpec{"the pushed loop writing hitl's rows",
			sqlite(loopRows), res.FloorRowsRoundTrips, res.FloorRowsCPUPerRoundTrip, nil, nil})
}

// streamsTarget is the number of long-polls and of subscribers the
// targets are stated for.
const streamsTarget = 10_000

// runStreams measures memory with many long-polls and subscribers, and
// fan-out, on a fresh server.
func runStreams(ctx context.Context, cfg Config, res *Result, progress func(string, ...any)) error {
	n := cfg.Streams
	if cfg.FileLimit > 0 {
		// Each side holds both kinds of connection; keep room for the rest.
		if room := int(cfg.FileLimit/2) - 128; room < n {
			progress("streams: the open-file limit (%d) allows %d long-polls and %d WebSockets, not %d each", cfg.FileLimit, room, room, n)
			n = room
		}
	}
	return withServer(ctx, cfg, "streams", func(srv *Server) error {
		sr, err := streams(ctx, srv, n, n, cfg.FanoutTrials, cfg.Settle, cfg.Shared, progress)
		res.StreamsLostWakeups = sr.Lost
		res.LostWakeups += sr.Lost
		if err != nil {
			return err
		}
		res.Waiters, res.Subscribers = sr.Waiters, sr.Subscribers
		p99s, lasts := make([]float64, len(sr.Trials)), make([]float64, len(sr.Trials))
		for i, d := range sr.Trials {
			p99s[i], lasts[i] = ms(d.P99), ms(d.Max)
		}
		res.FanoutP99, res.FanoutAll = ptr(median(p99s)), ptr(median(lasts))
		progress("streams: fan-out to %d subscribers: p99 %.3f ms, all reached in %.3f ms (medians of %d)", n, *res.FanoutP99, *res.FanoutAll, len(lasts))
		if srv.PID != 0 {
			res.StreamsBaseRSS = ptr(round1(sr.BaseMiB))
			res.RSSStreamsMeasured = ptr(round1(sr.MiB))
			res.KiBPerWait = ptr(round1((sr.WaitersMiB - sr.BaseMiB) * 1024 / float64(sr.Waiters)))
			res.KiBPerSubscriber = ptr(round1((sr.MiB - sr.WaitersMiB) * 1024 / float64(sr.Subscribers)))
			total := sr.MiB
			if n != streamsTarget {
				// Scale the connections' share to the stated count.
				total = sr.BaseMiB + (sr.MiB-sr.BaseMiB)*streamsTarget/float64(n)
				res.RSSStreamsExtrapolated = true
			}
			res.RSSWaitersSubscribers = ptr(round1(total))
			progress("streams: %d long-polls + %d WebSockets: %.1f MiB resident (%.1f MiB with the questions only; %.1f KiB per wait, %.1f KiB per WebSocket)",
				n, n, sr.MiB, sr.BaseMiB, *res.KiBPerWait, *res.KiBPerSubscriber)
		}
		progress("streams: %d of %d long-polls not woken", sr.Lost, sr.Waiters)
		return nil
	})
}

func ptr(f float64) *float64 { return &f }

func round1(f float64) float64 { return float64(int64(f*10+0.5)) / 10 }

// round3 rounds f to three decimals.
func round3(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }
