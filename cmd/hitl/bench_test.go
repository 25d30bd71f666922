package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl/internal/bench"
	"github.com/hitl-sh/hitl/internal/turns"
)

// TestBenchSmoke runs a tiny "hitl bench --json" end to end (child servers,
// every phase) so the benchmark keeps working. It asserts on the shape of
// the report, never on speed.
func TestBenchSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three servers")
	}
	turns.Parallel(t)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(hitlBin, "bench", "--json", "--dir", t.TempDir(),
		"--samples", "20", "--duration", "1s", "--pending", "200", "--ended", "150", "--streams", "20", "--trials", "2", "--settle", "10ms", "--all-floors", "--rounds", "2")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hitl bench: %v\nstderr:\n%s", err, stderr.String())
	}
	var got map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("decode report: %v\n%s", err, stdout.String())
	}
	for _, key := range []string{
		"unblock_p50_ms", "unblock_p95_ms", "unblock_p99_ms", "notify_p50_ms", "notify_p99_ms",
		"roundtrips_per_s", "unblock_p99_ms_c16", "lost_wakeups", "rss_100k_pending_mib",
		"rss_10k_waiters_10k_subscribers_mib", "fanout_10k_p99_ms", "floor_http_rtt_ms", "floor_commit_ms", "store",
		"floor_commit_idle_ms", "floor_unblock_ms", "floor_unblock_p99_ms",
	} {
		if v, ok := got[key]; !ok || v == nil {
			t.Errorf("report has no %s", key)
		}
	}
	// Every concurrency is measured. How many round trips fit in the
	// smoke run's 1 s window depends on the machine (on a busy one, 256
	// agents may finish none), so only the lone agent must have made one.
	rts, _ := got["roundtrips_per_s"].(map[string]any)
	for _, c := range []string{"1", "16", "256"} {
		v, ok := rts[c].(float64)
		if !ok || v < 0 || c == "1" && v == 0 {
			t.Errorf("roundtrips_per_s[%q] = %v, want a rate (positive for one agent)", c, rts[c])
		}
	}
	// The four floors (--all-floors) are measured at every concurrency
	// above one.
	for _, key := range []string{"floor_roundtrips_per_s", "floor_durable_create_roundtrips_per_s", "floor_pushed_roundtrips_per_s", "floor_rows_roundtrips_per_s"} {
		floors, _ := got[key].(map[string]any)
		for _, c := range []string{"16", "256"} {
			if _, ok := floors[c].(float64); !ok {
				t.Errorf("%s[%q] = %v, want a rate", key, c, floors[c])
			}
		}
	}
	// The floors and hitl took turns in two rounds: hitl's ratio to the
	// pushed loop in each.
	byRound, _ := got["roundtrips_vs_floor_pushed_rounds"].(map[string]any)
	if r, _ := byRound["16"].([]any); len(r) != 2 {
		t.Errorf("roundtrips_vs_floor_pushed_rounds[16] = %v, want a ratio for each of 2 rounds", byRound["16"])
	}
	if got["lost_wakeups"] != 0.0 {
		t.Errorf("lost_wakeups = %v, want 0", got["lost_wakeups"])
	}
	checkCurves(t, stdout.Bytes())
	if got["store"] != "sqlite" {
		t.Errorf("store = %v, want sqlite", got["store"])
	}
	if !strings.Contains(stderr.String(), "done") {
		t.Errorf("progress on stderr does not end with done:\n%s", stderr.String())
	}
}

func TestBenchRefusesRemoteServer(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"bench", "--server", "http://192.0.2.1:7878"}, &stdout, &stderr)
	if code != 2 {
		t.Fatalf("exit code %d, want 2; stderr: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "loopback") {
		t.Errorf("stderr %q does not explain the loopback rule", stderr.String())
	}
}

// TestBenchWithAuth: with --auth every phase's server runs with
// authentication on (a request without the token would be refused), and
// the token is gone from the database afterwards.
func TestBenchWithAuth(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	turns.Parallel(t)
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(hitlBin, "bench", "--json", "--auth", "--dir", dir, "--keep",
		"--samples", "20", "--duration", "1s", "--concurrency", "1,4", "--pending", "-1", "--ended", "-1", "--streams", "-1")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hitl bench --auth: %v\nstderr:\n%s", err, stderr.String())
	}
	var got struct {
		Auth        bool               `json:"auth"`
		LostWakeups int                `json:"lost_wakeups"`
		RoundTrips  map[string]float64 `json:"roundtrips_per_s"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("decode report: %v\n%s", err, stdout.String())
	}
	// The load run with 4 agents ran authenticated (its WebSocket and
	// every request carry the token; a refusal would have failed the
	// run). How many round trips fit in its second depends on the
	// machine, so only that it was measured is checked.
	if rate, ok := got.RoundTrips["4"]; !got.Auth || got.LostWakeups != 0 || !ok || rate < 0 {
		t.Errorf("report: %+v; want auth, no lost wake-ups, a rate for 4 agents", got)
	}
	dbs, _ := filepath.Glob(filepath.Join(dir, "hitl-bench-*", "latency.db"))
	if len(dbs) != 1 {
		t.Fatalf("the kept latency database: %v", dbs)
	}
	if out := mustRun(t, 0, "", "token", "ls", "--db", dbs[0]); strings.Contains(out, "hitl-bench") {
		t.Errorf("the benchmark's token is still there:\n%s", out)
	}
	if !strings.Contains(stderr.String(), "done") {
		t.Errorf("progress does not end with done:\n%s", stderr.String())
	}
}

// checkCurves checks the cost curves of a smoke run with --pending 200
// and --ended 150: one step each, every figure read, and the purge of the
// history with answers made meanwhile.
func checkCurves(t *testing.T, report []byte) {
	t.Helper()
	var got struct {
		Pending map[string]*bench.CurvePoint `json:"pending_curve"`
		Ended   map[string]*bench.CurvePoint `json:"ended_curve"`
		Purge   *bench.PurgeFigures          `json:"purge"`
		RSS1M   *float64                     `json:"rss_1m_pending_mib"`
	}
	if err := json.Unmarshal(report, &got); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		curve map[string]*bench.CurvePoint
		size  int
	}{"pending_curve": {got.Pending, 200}, "ended_curve": {got.Ended, 150}} {
		p := c.curve[strconv.Itoa(c.size)]
		switch {
		case len(c.curve) != 1 || p == nil:
			t.Errorf("%s = %v, want one step of %d", name, c.curve, c.size)
		case p.Interactions != c.size || p.RSSMiB == nil || p.RSSRestartedMiB == nil || p.StartupS == nil || *p.StartupS <= 0:
			t.Errorf("%s step: %+v, want its size, memory and startup", name, p)
		case p.InboxFirstScreenMs <= 0 || p.InboxFirstScreenBytes == 0 || p.ListPage1P99Ms <= 0 || p.UnblockP50Ms <= 0:
			t.Errorf("%s step: %+v, want the inbox, list and unblock figures", name, p)
		case p.DBBytesPerInteraction == nil || *p.DBBytesPerInteraction <= 0 || p.UnblockP50VsFloor == nil:
			t.Errorf("%s step: %+v, want the database size and the ratio to the loop", name, p)
		}
	}
	// 200 pending fit in four pages of 50: the deepest page is the 4th.
	if p := got.Pending["200"]; p != nil && p.ListDeepPage != 4 {
		t.Errorf("pending list's deepest page = %d, want 4", p.ListDeepPage)
	}
	if got.Purge == nil || got.Purge.Interactions != 150 || got.Purge.Seconds <= 0 || got.Purge.LostWakeups != 0 {
		t.Errorf("purge = %+v, want 150 purged, timed, with no lost wake-ups", got.Purge)
	}
	if got.RSS1M != nil {
		t.Errorf("rss_1m_pending_mib = %v in a run of 200, want null", *got.RSS1M)
	}
}

// TestBenchHooksSmoke: hitl bench --hooks runs every dialect's command
// hook through the real binary against a server with authentication on,
// and reports each figure beside its floor.
func TestBenchHooksSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the hook binary a few hundred times")
	}
	turns.Parallel(t)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(hitlBin, "bench", "--hooks", "--auth", "--json", "--dir", t.TempDir(), "--samples", "3", "--rules", "30")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hitl bench --hooks: %v\nstderr:\n%s", err, stderr.String())
	}
	var got struct {
		Hooks map[string]map[string]*float64 `json:"hooks"`
		Rules *float64                       `json:"rules_10k_vs_10_p50"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("decode report: %v\n%s", err, stdout.String())
	}
	for _, dialect := range []string{"claude-code", "codex", "gemini-cli", "copilot-cli", "opencode", "cursor", "cline"} {
		fig, ok := got.Hooks[dialect]
		if !ok {
			t.Errorf("no figures for %s", dialect)
			continue
		}
		for _, key := range []string{"rule_p50_ms", "rule_p99_ms", "floor_p50_ms", "person_notify_p50_ms", "person_unblock_p50_ms"} {
			if v := fig[key]; v == nil || *v <= 0 {
				t.Errorf("%s: %s is %v", dialect, key, v)
			}
		}
	}
	if got.Rules == nil || *got.Rules <= 0 {
		t.Errorf("rules_10k_vs_10_p50 is %v", got.Rules)
	}
	var flat map[string]any
	_ = json.Unmarshal(stdout.Bytes(), &flat)
	for _, key := range []string{"http_hook_rule_p50_ms", "http_hook_floor_p50_ms", "http_hook_commit_floor_p50_ms", "http_hook_rows_floor_p50_ms", "start_p50_ms", "floor_start_p50_ms"} {
		if v, ok := flat[key].(float64); !ok || v <= 0 {
			t.Errorf("%s is %v", key, flat[key])
		}
	}
}
