package bench

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// postgresCPU reads the PostgreSQL processes serving HITL_TEST_POSTGRES,
// and sees the CPU a busy connection adds, also once it has closed.
func TestPostgresCPU(t *testing.T) {
	url := os.Getenv("HITL_TEST_POSTGRES")
	if url == "" {
		t.Skip("HITL_TEST_POSTGRES is not set")
	}
	before, ok := postgresCPU()
	if !ok {
		t.Skip("no PostgreSQL process on this machine to read")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	// About a second of the backend's CPU (generate_series in a loop).
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		if _, err := conn.Exec(ctx, `SELECT count(*) FROM generate_series(1, 200000)`); err != nil {
			t.Fatal(err)
		}
	}
	backend := strconv.Itoa(int(conn.PgConn().PID()))
	conn.Close(ctx)
	// Read once the backend has ended: its time is then the postmaster's.
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat("/proc/" + backend); os.IsNotExist(err) {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("backend %s still running 10 s after its connection closed", backend)
		}
	}
	// The reading must account for the work; how much CPU it took
	// depends on the host, so only that it grew is checked.
	after, _ := postgresCPU()
	if used := after - before; used <= 0 {
		t.Errorf("PostgreSQL's CPU by the readings went from %s to %s after a second of queries, want it to grow", before, after)
	}
}
