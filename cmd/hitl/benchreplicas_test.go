package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/hitl-sh/hitl/internal/bench"
	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/postgres/pgtest"
	"github.com/jackc/pgx/v5"
)

// TestBenchReplicasSmoke runs "hitl bench --db … --replicas 1,2" tiny, on
// a schema of its own: the cost curve on PostgreSQL (sizes from the
// database's relations), the PostgreSQL floor beside hitl, and each
// number of replicas measured, with no lost wake-ups. It asserts the report's shape, never speed.
func TestBenchReplicasSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers on PostgreSQL")
	}
	turns.Parallel(t)
	schema := pgtest.Schema(t)
	dsn := pgtest.SchemaDSN(schema)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(hitlBin, "bench", "--json", "--dir", t.TempDir(), "--db", dsn, "--replicas", "1,2",
		"--samples", "20", "--duration", "1s", "--concurrency", "1", "--pending", "120", "--ended", "-1",
		"--streams", "20", "--trials", "2", "--settle", "10ms")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hitl bench: %v\nstderr:\n%s", err, stderr.String())
	}
	var got struct {
		Store       string                           `json:"store"`
		LostWakeups int                              `json:"lost_wakeups"`
		Pending     map[string]*bench.CurvePoint     `json:"pending_curve"`
		Replicas    map[string]*bench.ReplicaFigures `json:"replicas"`
		FloorLoop   *float64                         `json:"floor_unblock_ms"`
		PGFloor     map[string]float64               `json:"pg_floor_roundtrips_per_s"`
		VsPGFloor   map[string]float64               `json:"roundtrips_vs_pg_floor"`
		PGRowsFloor map[string]float64               `json:"pg_rows_floor_roundtrips_per_s"`
		VsPGRows    map[string]float64               `json:"roundtrips_vs_pg_rows_floor"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("decode report: %v\n%s", err, stdout.String())
	}
	if got.Store != "postgres" || got.LostWakeups != 0 {
		t.Errorf("store %q, %d lost wake-ups; want postgres and none", got.Store, got.LostWakeups)
	}
	if got.FloorLoop == nil || *got.FloorLoop <= 0 || got.PGFloor["1"] <= 0 || got.VsPGFloor["1"] <= 0 {
		t.Errorf("PostgreSQL floor: unblock %v, round trips %v, hitl's ratio %v; want each measured", got.FloorLoop, got.PGFloor, got.VsPGFloor)
	}
	if got.PGRowsFloor["1"] <= 0 || got.VsPGRows["1"] <= 0 {
		t.Errorf("PostgreSQL floor with hitl's rows: round trips %v, hitl's ratio %v; want each measured", got.PGRowsFloor, got.VsPGRows)
	}
	if p := got.Pending["120"]; p == nil || p.DBBytesPerInteraction == nil || *p.DBBytesPerInteraction <= 0 || p.StartupS == nil {
		t.Errorf("pending curve %+v: want the step of 120 with its database size and startup", got.Pending)
	}
	for _, n := range []string{"1", "2"} {
		f := got.Replicas[n]
		if f == nil || f.UnblockP50Ms <= 0 || f.RoundTrips < 0 || f.Subscribers != 20 || f.FanoutAllMs == nil || f.LostWakeups != 0 {
			t.Errorf("replicas[%s] = %+v; want unblock, round trips and a fan-out to 20, no lost wake-ups", n, f)
		}
	}
	// Nothing is left pending in the shared schema.
	var pending int
	conn := pgtest.Connect(t)
	if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM `+pgx.Identifier{schema, "interactions"}.Sanitize()+` WHERE status = 'pending'`).Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if pending != 0 {
		t.Errorf("%d interactions left pending", pending)
	}
}
