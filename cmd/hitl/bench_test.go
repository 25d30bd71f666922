package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchSmoke runs a tiny "hitl bench --json" end to end (child servers,
// every phase) so the benchmark keeps working. It asserts on the shape of
// the report, never on speed.
func TestBenchSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three servers")
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(hitlBin, "bench", "--json", "--dir", t.TempDir(),
		"--samples", "20", "--duration", "1s", "--pending", "200", "--streams", "20", "--trials", "2", "--settle", "10ms")
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
	if got["lost_wakeups"] != 0.0 {
		t.Errorf("lost_wakeups = %v, want 0", got["lost_wakeups"])
	}
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
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(hitlBin, "bench", "--json", "--auth", "--dir", dir, "--keep",
		"--samples", "20", "--duration", "1s", "--concurrency", "1,4", "--pending", "-1", "--streams", "-1")
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
