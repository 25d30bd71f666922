package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hitl-sh/hitl/internal/bench"
)

// runBench measures a hitl server end to end against the machine's floor.
// Exit codes: 0 when every phase ran, 1 when one failed, 2 for bad flags.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench", "hitl bench [flags]",
		"Measures hitl end to end on this machine, over real HTTP and WebSocket\n"+
			"connections on loopback: answer → agent unblocked, question → person,\n"+
			"round trips per second at 1, 16 and 256 agents (with lost wake-ups\n"+
			"counted), memory and the cost curve with 10,000 pending questions\n"+
			"(--pending for 100,000 and more, --ended for the history and its purge),\n"+
			"10,000 long-polls plus 10,000 WebSockets, and fan-out to every\n"+
			"subscriber. The floor is measured in the same run: a bare loopback HTTP\n"+
			"round trip, a bare durable commit on the same disk or database, and the\n"+
			"answer loop against the least server that does it durably, alone and at\n"+
			"each concurrency of the round-trip runs (their rates are shown as a ratio\n"+
			"to it), there also with each question committed and pushed to the\n"+
			"person's WebSocket, as hitl does; with --db, that loop on PostgreSQL.\n\n"+
			"Each phase runs its own \"hitl serve\" child process on a temporary SQLite\n"+
			"file (or --db), so its memory is read alone. The table goes to stdout,\n"+
			"progress to stderr. The default run takes about two minutes on a quiet\n"+
			"2-core host; --quick, under one. Only loopback servers are targeted.", stderr)
	f := addBenchFlags(fs)
	if code, ok := parse(fs, args, 2); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hitl bench: unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return 2
	}
	cfg, err := f.config()
	if err != nil {
		fmt.Fprintf(stderr, "hitl bench: %v\n", err)
		return 2
	}
	cfg.Progress = stderr
	limit, err := bench.RaiseFileLimit()
	if err != nil {
		fmt.Fprintf(stderr, "hitl bench: %v\n", err)
	}
	cfg.FileLimit = limit

	tmp, err := os.MkdirTemp(*f.dir, "hitl-bench-")
	if err != nil {
		fmt.Fprintf(stderr, "hitl bench: %v\n", err)
		return 1
	}
	if *f.keep {
		fmt.Fprintf(stderr, "hitl bench: keeping %s\n", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	cfg.Dir = tmp
	if code, err := f.launcher(&cfg, tmp); err != nil {
		fmt.Fprintf(stderr, "hitl bench: %v\n", err)
		return code
	}

	if *f.hooks {
		return runBenchHooks(ctx, f, cfg, stdout, stderr)
	}
	start := time.Now()
	res, err := bench.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "hitl bench: %v (after %s)\n", err, time.Since(start).Round(time.Second))
	}
	if res != nil {
		if *f.asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(res)
		} else {
			_ = res.WriteTable(stdout)
		}
	}
	if err != nil {
		return 1
	}
	return 0
}

// runBenchHooks runs hitl bench --hooks.
func runBenchHooks(ctx context.Context, f *benchFlags, cfg bench.Config, stdout, stderr io.Writer) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "hitl bench: find the hitl binary: %v\n", err)
		return 1
	}
	samples := *f.samples
	if samples == 0 && *f.quick {
		samples = 30
	}
	rules := *f.rules
	if rules == 0 && *f.quick {
		rules = 1000
	}
	hc := bench.HooksConfig{Launch: cfg.Launch, Exe: exe, Dir: cfg.Dir, Samples: samples, Rules: rules, Progress: stderr}
	if samples > 0 {
		hc.PersonSamples = min(samples, 10)
	}
	res, err := bench.RunHooks(ctx, hc)
	if err != nil {
		fmt.Fprintf(stderr, "hitl bench: %v\n", err)
		return 1
	}
	res.Store = cfg.Store
	if *f.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(res)
	} else {
		_ = res.WriteTable(stdout)
	}
	return 0
}

// benchFlags are hitl bench's flags.
type benchFlags struct {
	quick, asJSON, keep, withAuth     *bool
	allFloors                         *bool
	hooks                             *bool
	rules                             *int
	db, serverURL, dir, conc, replica *string
	samples, pending, ended, streams  *int
	trials, rounds                    *int
	duration, settle                  *time.Duration
	serverEnv                         []string
}

// addBenchFlags defines hitl bench's flags on fs.
func addBenchFlags(fs *flag.FlagSet) *benchFlags {
	f := &benchFlags{}
	f.quick = fs.Bool("quick", false, "a reduced run, in under a minute")
	f.asJSON = fs.Bool("json", false, "print one JSON object instead of the table")
	f.hooks = fs.Bool("hooks", false, "measure only what an agent pays per tool call: every dialect's command hook and the\nHTTP hook when a rule decides, beside their floors, with --rules rules in force, and\ncalls that go to a person (about a minute with the defaults)")
	f.rules = fs.Int("rules", 0, "with --hooks: the larger rule set of the flatness run, beside 10 (default 10000;\n-1 skips)")
	f.db = fs.String("db", "", "database `URL` for the servers (postgres://…); default: a temporary SQLite file per phase")
	f.serverURL = fs.String("server", "", "benchmark the running server at `URL` (loopback only) instead of starting one; memory is not measured")
	f.dir = fs.String("dir", "", "`directory` for the temporary databases and logs (default: the system temp dir); the floor commit is measured there")
	f.keep = fs.Bool("keep", false, "keep the temporary directory (databases, server logs)")
	f.withAuth = fs.Bool("auth", false, "run the servers with authentication on: each gets an admin API token, which every\nrequest carries, and no answer limit (with --server, HITL_TOKEN is sent instead)")
	f.samples = fs.Int("samples", 0, "sequential latency `samples` (default 2000, 300 with --quick)")
	f.duration = fs.Duration("duration", 0, "each round-trip run (default 5s, 2s with --quick)")
	f.rounds = fs.Int("rounds", 0, "each concurrency's round-trip runs take turns with their floors' in this many\nrounds of --duration/N each, so that a host whose speed drifts moves both (default 3,\n2 with --quick)")
	f.pending = fs.Int("pending", 0, "pending questions of the cost curve's last step: it measures at 10,000, 100,000,\n1,000,000 … up to this (default 10000; 1000000 adds about a minute on a quiet host,\nfifteen on a busy one; -1 skips)")
	f.ended = fs.Int("ended", 0, "answered questions of the history's cost curve, purged at its end (default: not\nmeasured; 100000 takes about three minutes)")
	f.allFloors = fs.Bool("all-floors", false, "also measure, at each concurrency, the loop that commits each question before its id\nis out but does not push it (between the bare and the pushed loop; SQLite)")
	f.streams = fs.Int("streams", 0, "long-polls, and WebSockets, held open (default 10000, 1000 with --quick; -1 skips)")
	f.trials = fs.Int("trials", 0, "questions fanned out to every WebSocket (default 10, 5 with --quick)")
	fs.Func("server-env", "`KEY=VALUE` set in the servers' environment (repeatable), such as GOMEMLIMIT=400MiB", func(v string) error {
		if k, _, ok := strings.Cut(v, "="); !ok || k == "" {
			return fmt.Errorf("want KEY=VALUE")
		}
		f.serverEnv = append(f.serverEnv, v)
		return nil
	})
	f.conc = fs.String("concurrency", "1,16,256", "round-trip runs: comma-separated numbers of agents")
	f.replica = fs.String("replicas", "", "with --db: comma-separated numbers of replicas to run on the one database, such as\n1,2,4 (unblock across replicas, round trips, fan-out, database CPU)")
	f.settle = fs.Duration("settle", 0, "how long a server idles before its memory is read (default 2s)")
	return f
}

// config checks the flags together and returns the benchmark's
// configuration (without its launcher, directory and progress writer).
func (f *benchFlags) config() (bench.Config, error) {
	if *f.withAuth && *f.serverURL != "" {
		return bench.Config{}, errors.New("--auth is for the servers the benchmark starts; with --server, set HITL_TOKEN")
	}
	if *f.db != "" && *f.serverURL != "" {
		return bench.Config{}, errors.New("--db and --server exclude each other")
	}
	if *f.db != "" && !strings.HasPrefix(*f.db, "postgres://") && !strings.HasPrefix(*f.db, "postgresql://") {
		return bench.Config{}, errors.New("--db must be a postgres:// URL (the default is a temporary SQLite file)")
	}
	if *f.rounds < 0 {
		return bench.Config{}, errors.New("--rounds must be 1 or more")
	}
	cfg := bench.Config{}
	if *f.quick {
		cfg = bench.Quick()
	}
	cfg.Samples = pick(*f.samples, cfg.Samples)
	cfg.Pending = pick(*f.pending, cfg.Pending)
	cfg.Ended = pick(*f.ended, cfg.Ended)
	cfg.Streams = pick(*f.streams, cfg.Streams)
	cfg.FanoutTrials = pick(*f.trials, cfg.FanoutTrials)
	cfg.Rounds = pick(*f.rounds, cfg.Rounds)
	if *f.duration > 0 {
		cfg.Duration = *f.duration
	}
	cfg.Settle = *f.settle
	cfg.AllFloors = *f.allFloors
	var err error
	if cfg.Concurrency, err = numbers(*f.conc, 4096); err != nil {
		return bench.Config{}, fmt.Errorf("--concurrency must list numbers from 1 to 4096; got %q", *f.conc)
	}
	if *f.replica != "" {
		if *f.db == "" {
			return bench.Config{}, errors.New("--replicas needs --db: replicas share a PostgreSQL database")
		}
		if cfg.Replicas, err = numbers(*f.replica, 16); err != nil {
			return bench.Config{}, fmt.Errorf("--replicas must list numbers from 1 to 16; got %q", *f.replica)
		}
	}
	return cfg, nil
}

// launcher sets how cfg's phases get their server: the one at --server,
// or a "hitl serve" child per phase over a file in tmp or --db. On error
// it returns the exit code.
func (f *benchFlags) launcher(cfg *bench.Config, tmp string) (int, error) {
	if *f.serverURL != "" {
		launch, err := bench.Existing(*f.serverURL, os.Getenv("HITL_TOKEN"))
		if err != nil {
			return 2, err
		}
		cfg.Launch, cfg.Store, cfg.Shared = launch, "server at "+*f.serverURL, true
		return 0, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return 1, fmt.Errorf("find the hitl binary: %w", err)
	}
	child := &bench.Child{Exe: exe, Dir: tmp, Env: f.serverEnv, Auth: *f.withAuth, DB: func(phase string) string {
		return filepath.Join(tmp, phase+".db")
	}}
	cfg.Store = "sqlite"
	if url := *f.db; url != "" {
		child.DB = func(string) string { return url }
		cfg.Store, cfg.Shared, cfg.PostgresURL = "postgres", true, url
	}
	cfg.Launch, cfg.Auth, cfg.Database, cfg.Purge = child.Launch, *f.withAuth, child.DB, child.Purge
	return 0, nil
}

// pick returns v when it was set on the command line, else def.
func pick(v, def int) int {
	if v != 0 {
		return v
	}
	return def
}

// numbers parses a comma-separated list of numbers from 1 to most.
func numbers(list string, most int) ([]int, error) {
	var out []int
	for _, field := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || n < 1 || n > most {
			return nil, fmt.Errorf("bad number %q", field)
		}
		out = append(out, n)
	}
	return out, nil
}
