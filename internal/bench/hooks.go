package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// HooksConfig says what the hooks phase ("hitl bench --hooks") runs: what
// a coding agent pays per tool call with hitl's hook in front of it.
type HooksConfig struct {
	// Launch starts the phase's server (phase "hooks"). Required.
	Launch func(ctx context.Context, phase string) (*Server, error)
	// Exe is the hitl binary run as every dialect's command hook. Required.
	Exe string
	// Dir holds the floor hook's binary and the HTTP floor's database.
	// Required.
	Dir string
	// Samples is the rule-decided calls per dialect, and HTTP hook calls;
	// 0 means 200.
	Samples int
	// PersonSamples is the calls per dialect that go to a person; 0 means
	// 10, <0 skips them.
	PersonSamples int
	// Rules is the larger rule set of the flatness run (the smaller has
	// 10); 0 means 10,000, <0 skips the run.
	Rules    int
	Progress io.Writer // progress lines; nil discards them
}

func (c *HooksConfig) defaults() {
	if c.Samples <= 0 {
		c.Samples = 200
	}
	if c.PersonSamples == 0 {
		c.PersonSamples = 10
	}
	if c.Rules == 0 {
		c.Rules = 10_000
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
}

// HookFigures are one dialect's command hook figures, in milliseconds:
// the wall time from starting "hitl hook <dialect>" to its exit.
type HookFigures struct {
	// RuleP50 and RuleP99: a call a rule allows.
	RuleP50 float64 `json:"rule_p50_ms"`
	RuleP99 float64 `json:"rule_p99_ms"`
	// FloorP50 and FloorP99: the floor hook (a static binary that reads
	// the same input and prints a fixed decision), sampled alternately
	// with the dialect's.
	FloorP50 float64 `json:"floor_p50_ms"`
	FloorP99 float64 `json:"floor_p99_ms"`
	// RuleVsFloorP50 is RuleP50 over FloorP50.
	RuleVsFloorP50 float64 `json:"rule_vs_floor_p50"`
	// PersonNotifyP50: from starting the hook to its question arriving
	// on the person's WebSocket. PersonUnblockP50: from the person's
	// answer being sent to the hook exiting with it. Null when not run.
	PersonNotifyP50  *float64 `json:"person_notify_p50_ms"`
	PersonUnblockP50 *float64 `json:"person_unblock_p50_ms"`
}

// HooksResult is the hooks phase's figures. Times are in milliseconds.
type HooksResult struct {
	Store string `json:"store"`
	// Hooks is keyed by dialect: claude-code, codex, gemini-cli, …
	Hooks   map[string]HookFigures `json:"hooks"`
	Samples int                    `json:"samples"`
	// The HTTP hook (Claude Code's, POST /api/v1/hooks/claude-code) on a
	// keep-alive connection, a rule allowing the call, beside its floor:
	// a loopback HTTP server that reads the same body, makes one read of
	// a SQLite store and writes a response of the same size.
	HTTPHookRuleP50    float64 `json:"http_hook_rule_p50_ms"`
	HTTPHookRuleP99    float64 `json:"http_hook_rule_p99_ms"`
	HTTPHookFloorP50   float64 `json:"http_hook_floor_p50_ms"`
	HTTPHookFloorP99   float64 `json:"http_hook_floor_p99_ms"`
	HTTPHookVsFloorP50 float64 `json:"http_hook_vs_floor_p50"`
	// RulesP50 is the HTTP hook's rule-decided p50 keyed by the number of
	// rules in force ("10", "10000"); Rules10kVs10P50 the larger over the
	// smaller. Null when the run was skipped.
	RulesP50        map[string]float64 `json:"http_hook_rules_p50_ms"`
	Rules10kVs10P50 *float64           `json:"rules_10k_vs_10_p50"`
	// StartP50 is starting hitl's binary and its packages' initialisation,
	// with nothing to do ("hitl hook" without an agent: it prints its
	// usage): the part of every command hook's figure that is the binary
	// alone. FloorStartP50 is the floor hook's, alternated with it.
	StartP50      float64 `json:"start_p50_ms"`
	FloorStartP50 float64 `json:"floor_start_p50_ms"`
	// HTTPHookCommitFloorP50 is the HTTP floor that also commits one row
	// durably per call, as hitl records every decision, a rule's too,
	// before it answers.
	HTTPHookCommitFloorP50   float64 `json:"http_hook_commit_floor_p50_ms"`
	HTTPHookVsCommitFloorP50 float64 `json:"http_hook_vs_commit_floor_p50"`
	// HTTPHookRowsFloorP50 is the HTTP floor that commits hitl's own
	// record of the call instead (hookRecord: its interaction row and two
	// events, in hitl's schema): between it and the HTTP hook is what hitl
	// does besides writing its record.
	HTTPHookRowsFloorP50   float64 `json:"http_hook_rows_floor_p50_ms"`
	HTTPHookVsRowsFloorP50 float64 `json:"http_hook_vs_rows_floor_p50"`
	// OtherCPU is the CPU time (s) the rest of the machine used during the
	// phase: a busy machine's figures are not comparable.
	OtherCPU float64 `json:"other_cpu_s"`
	Load     float64 `json:"load_average"`
}

// RunHooks runs the hooks phase: every dialect's command hook and the
// HTTP hook when a rule decides, beside their floors, the rule set's
// flatness, and calls that go to a person.
func RunHooks(ctx context.Context, cfg HooksConfig) (*HooksResult, error) {
	cfg.defaults()
	progress := func(format string, a ...any) { fmt.Fprintf(cfg.Progress, "hooks: "+format+"\n", a...) }
	floorBin, err := buildFloorHook(ctx, cfg.Dir)
	if err != nil {
		return nil, err
	}
	srv, err := cfg.Launch(ctx, "hooks")
	if err != nil {
		return nil, fmt.Errorf("hooks: %w", err)
	}
	if srv.Stop != nil {
		defer srv.Stop()
	}
	a := newAPI(srv, 4)
	defer a.close()
	busy0, own0, srv0 := machineBusy(), ownCPU(), serverCPU(srv)
	res := &HooksResult{Hooks: map[string]HookFigures{}, Samples: cfg.Samples}
	ruleIDs, err := allowBenchCommand(ctx, a)
	if err != nil {
		return nil, err
	}
	defer func() { revokeRules(context.WithoutCancel(ctx), a, ruleIDs) }()

	env := append(os.Environ(), "HITL_URL="+srv.URL, "HITL_TOKEN="+srv.Token)
	progress("start: %d runs of hitl's binary with nothing to do, alternating with the floor hook", cfg.Samples)
	if err := startup(ctx, cfg, floorBin, env, res); err != nil {
		return nil, err
	}
	for _, dialect := range HookDialects() {
		progress("%s: %d calls a rule allows, alternating with the floor hook", dialect, cfg.Samples)
		fig, err := commandHook(ctx, cfg, dialect, floorBin, env)
		if err != nil {
			return nil, err
		}
		res.Hooks[dialect] = fig
	}

	progress("http hook: %d calls a rule allows, alternating with its floor", cfg.Samples)
	if err := httpHook(ctx, cfg, a, res); err != nil {
		return nil, err
	}

	if cfg.Rules > 0 {
		progress("rules: the http hook with 10 rules, then %d", cfg.Rules)
		if err := rulesFlatness(ctx, cfg, a, res, &ruleIDs); err != nil {
			return nil, err
		}
	}

	if cfg.PersonSamples > 0 {
		for _, dialect := range HookDialects() {
			progress("%s: %d calls that go to a person", dialect, cfg.PersonSamples)
			if err := personHook(ctx, cfg, srv, a, dialect, env, res); err != nil {
				return nil, err
			}
		}
	}
	// The machine's CPU less this process's, its finished children's (the
	// hooks and floors it ran) and the server's.
	other := (machineBusy() - busy0) - (ownCPU() - own0) - (serverCPU(srv) - srv0)
	res.OtherCPU = max(other, 0).Seconds()
	res.Load = loadAverage()
	return res, nil
}

// hookRun runs a command hook once with input on stdin and returns its
// wall time and its output; an exit status other than 0 is an error.
func hookRun(ctx context.Context, name string, args, env []string, input []byte) (time.Duration, []byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(input)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	t0 := time.Now()
	err := cmd.Run()
	d := time.Since(t0)
	if err != nil {
		return d, nil, fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(errOut.Bytes()))
	}
	return d, out.Bytes(), nil
}

// expectAllow fails unless out is a hook's allow.
func expectAllow(dialect string, out []byte) error {
	d, err := hookDecision(out)
	if err != nil {
		return fmt.Errorf("%s: %w: %s", dialect, err, bytes.TrimSpace(out))
	}
	if d != "allow" {
		return fmt.Errorf("%s: the hook answered %q, not allow: %s", dialect, d, bytes.TrimSpace(out))
	}
	return nil
}

// startup samples starting hitl's binary with nothing to do ("hitl hook",
// which prints its usage and exits 2), each run followed by one of the
// floor hook.
func startup(ctx context.Context, cfg HooksConfig, floorBin string, env []string, res *HooksResult) error {
	warm := max(cfg.Samples/10, 3)
	var start, floor []time.Duration
	for i := range warm + cfg.Samples {
		cmd := exec.CommandContext(ctx, cfg.Exe, "hook")
		cmd.Env = env
		t0 := time.Now()
		err := cmd.Run()
		d := time.Since(t0)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 {
			return fmt.Errorf("start: hitl hook without an agent: %v, want exit status 2", err)
		}
		f, out, err := hookRun(ctx, floorBin, nil, env, nil)
		if err != nil {
			return err
		}
		if err := expectAllow("floor", out); err != nil {
			return err
		}
		if i >= warm {
			start, floor = append(start, d), append(floor, f)
		}
	}
	res.StartP50, res.FloorStartP50 = ms(summarize(start).P50), ms(summarize(floor).P50)
	return nil
}

// commandHook samples one dialect's rule-decided command hook, each call
// followed by one of the floor hook.
func commandHook(ctx context.Context, cfg HooksConfig, dialect, floorBin string, env []string) (HookFigures, error) {
	warm := max(cfg.Samples/10, 3)
	hook := make([]time.Duration, 0, cfg.Samples)
	floor := make([]time.Duration, 0, cfg.Samples)
	for i := range warm + cfg.Samples {
		input := hookInput(dialect, nextCall(), benchCommand)
		d, out, err := hookRun(ctx, cfg.Exe, []string{"hook", dialect}, env, input)
		if err != nil {
			return HookFigures{}, err
		}
		if err := expectAllow(dialect, out); err != nil {
			return HookFigures{}, err
		}
		f, out, err := hookRun(ctx, floorBin, nil, env, input)
		if err != nil {
			return HookFigures{}, err
		}
		if err := expectAllow("floor", out); err != nil {
			return HookFigures{}, err
		}
		if i >= warm {
			hook, floor = append(hook, d), append(floor, f)
		}
	}
	h, fl := summarize(hook), summarize(floor)
	return HookFigures{RuleP50: ms(h.P50), RuleP99: ms(h.P99), FloorP50: ms(fl.P50), FloorP99: ms(fl.P99),
		RuleVsFloorP50: ratio(h.P50, fl.P50)}, nil
}

// httpHook samples Claude Code's HTTP hook and its floor alternately, so
// both see the same machine.
func httpHook(ctx context.Context, cfg HooksConfig, a *api, res *HooksResult) error {
	resp, err := httpHookCall(ctx, a, hookInput("claude-code", nextCall(), benchCommand))
	if err != nil {
		return err
	}
	floorURL, stop, err := floorHTTPHook(cfg.Dir, len(resp))
	if err != nil {
		return err
	}
	defer stop()
	fa := newAPI(&Server{URL: floorURL}, 1)
	defer fa.close()
	floorCall := func(path string, input []byte) (time.Duration, error) {
		t0 := time.Now()
		status, _, err := fa.roundTrip(ctx, "POST", path, input)
		if err == nil && status != 200 {
			err = fmt.Errorf("status %d", status)
		}
		if err != nil {
			return 0, fmt.Errorf("floor http hook: %w", err)
		}
		return time.Since(t0), nil
	}
	warm := max(cfg.Samples/10, 3)
	var hook, floor, commit, rows []time.Duration
	for i := range warm + cfg.Samples {
		input := hookInput("claude-code", nextCall(), benchCommand)
		t0 := time.Now()
		if _, err := httpHookCall(ctx, a, input); err != nil {
			return err
		}
		d := time.Since(t0)
		f, err := floorCall("/", input)
		if err != nil {
			return err
		}
		c, err := floorCall("/commit", input)
		if err != nil {
			return err
		}
		rw, err := floorCall("/rows", input)
		if err != nil {
			return err
		}
		if i >= warm {
			hook, floor, commit, rows = append(hook, d), append(floor, f), append(commit, c), append(rows, rw)
		}
	}
	h, fl, fc, fr := summarize(hook), summarize(floor), summarize(commit), summarize(rows)
	res.HTTPHookRuleP50, res.HTTPHookRuleP99 = ms(h.P50), ms(h.P99)
	res.HTTPHookFloorP50, res.HTTPHookFloorP99 = ms(fl.P50), ms(fl.P99)
	res.HTTPHookVsFloorP50 = ratio(h.P50, fl.P50)
	res.HTTPHookCommitFloorP50, res.HTTPHookVsCommitFloorP50 = ms(fc.P50), ratio(h.P50, fc.P50)
	res.HTTPHookRowsFloorP50, res.HTTPHookVsRowsFloorP50 = ms(fr.P50), ratio(h.P50, fr.P50)
	return nil
}

// calls numbers the phase's calls, so each has ids of its own: from a
// random start, so that a run on a database an earlier run used (--db)
// makes new calls, not that run's again (hitl would answer those as
// repeats, from the record).
var calls = func() *atomic.Int64 {
	c := new(atomic.Int64)
	c.Store(rand.Int64N(1e11))
	return c
}()

// nextCall returns a new call's number.
func nextCall() int { return int(calls.Add(1)) }

// claudeHookPath is Claude Code's HTTP hook on hitl.
const claudeHookPath = "/api/v1/hooks/claude-code"

// httpHookCall makes one HTTP hook call that a rule must allow, and
// returns the response's body.
func httpHookCall(ctx context.Context, a *api, input []byte) ([]byte, error) {
	status, out, err := a.roundTrip(ctx, "POST", claudeHookPath, input)
	if err != nil {
		return nil, fmt.Errorf("http hook: %w", err)
	}
	if status != 200 {
		return nil, fmt.Errorf("http hook: status %d: %s", status, bytes.TrimSpace(out))
	}
	return out, expectAllow("http hook", out)
}

// httpHookP50 returns the p50 of n rule-decided HTTP hook calls (after a
// tenth more to warm up).
func httpHookP50(ctx context.Context, a *api, n int) (time.Duration, error) {
	warm := max(n/10, 3)
	samples := make([]time.Duration, 0, n)
	for i := range warm + n {
		input := hookInput("claude-code", nextCall(), benchCommand)
		t0 := time.Now()
		if _, err := httpHookCall(ctx, a, input); err != nil {
			return 0, err
		}
		if i >= warm {
			samples = append(samples, time.Since(t0))
		}
	}
	return summarize(samples).P50, nil
}

// ratio returns a over b, rounded to hundredths; 0 when b is 0.
func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(float64(a)/float64(b), 'f', 2, 64), 64)
	return r
}

// allowBenchCommand makes the rule every dialect's call is decided by: an
// allow rule for benchCommand on shell actions, for every agent. It
// returns the rules' ids, to revoke at the end.
func allowBenchCommand(ctx context.Context, a *api) ([]string, error) {
	id, err := createRule(ctx, a, fmt.Sprintf(`{"effect":"allow","source_agent":"*","kind":"shell","match":{"arg":"command","prefix":%q}}`, benchCommand))
	if err != nil {
		return nil, err
	}
	return []string{id}, nil
}

// createRule posts a rule and returns its id.
func createRule(ctx context.Context, a *api, body string) (string, error) {
	status, data, err := a.roundTrip(ctx, "POST", "/api/v1/rules", []byte(body))
	if err != nil {
		return "", fmt.Errorf("create a rule: %w", err)
	}
	if status != 201 {
		return "", fmt.Errorf("create a rule: status %d: %s", status, bytes.TrimSpace(data))
	}
	id := jsonField(data, "rule_id")
	if id == "" {
		return "", errors.New("create a rule: no rule_id in the response")
	}
	return id, nil
}

// revokeRules revokes the rules the phase made, so a shared server keeps
// none of them.
func revokeRules(ctx context.Context, a *api, ids []string) {
	for _, id := range ids {
		_, _, _ = a.roundTrip(ctx, "DELETE", "/api/v1/rules/"+id, nil)
	}
}
