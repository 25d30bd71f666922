package bench

import (
	"testing"
	"time"
)

// TestMergeLoads: runs taken in turns add up to one run, their
// percentiles taken over every sample together.
func TestMergeLoads(t *testing.T) {
	t.Parallel()
	ms := func(ds ...int) []time.Duration {
		out := make([]time.Duration, len(ds))
		for i, d := range ds {
			out[i] = time.Duration(d) * time.Millisecond
		}
		return out
	}
	a := loadResult{Concurrency: 16, RoundTrips: 100, Window: time.Second, Lost: 1, ServerCPU: 30 * time.Millisecond,
		DriverCPU: 10 * time.Millisecond, DatabaseRead: true, unblocks: ms(1, 2), roundtrips: ms(3, 4)}
	b := loadResult{Concurrency: 16, RoundTrips: 300, Window: 2 * time.Second, Reconnects: 2, LastDrop: "slow",
		ServerCPU: 50 * time.Millisecond, DriverCPU: 20 * time.Millisecond, unblocks: ms(9, 10), roundtrips: ms(11, 12, 13)}
	m := mergeLoads([]loadResult{a, b})
	if m.RoundTrips != 400 || m.Window != 3*time.Second || m.perSecond() != 400.0/3 {
		t.Errorf("round trips %d in %s; want 400 in 3s", m.RoundTrips, m.Window)
	}
	if m.ServerCPU != 80*time.Millisecond || m.DriverCPU != 30*time.Millisecond || m.cpuPerRoundTrip(m.ServerCPU) != 200*time.Microsecond {
		t.Errorf("CPU server %s, driver %s; want 80ms and 30ms", m.ServerCPU, m.DriverCPU)
	}
	if m.Lost != 1 || m.Reconnects != 2 || m.LastDrop != "slow" || m.DatabaseRead {
		t.Errorf("lost %d, reconnects %d, last drop %q, database read %v; want 1, 2, slow, false (one run could not read it)",
			m.Lost, m.Reconnects, m.LastDrop, m.DatabaseRead)
	}
	if m.Unblock.N != 4 || m.Unblock.P50 != 2*time.Millisecond || m.Unblock.Max != 10*time.Millisecond || m.RoundTrip.N != 5 || m.RoundTrip.P50 != 11*time.Millisecond {
		t.Errorf("unblock %+v, round trip %+v; want the percentiles of all samples", m.Unblock, m.RoundTrip)
	}
	if one := mergeLoads([]loadResult{a}); one.RoundTrips != 100 || one.Unblock != a.Unblock {
		t.Errorf("one run merged: %+v; want it as it was", one)
	}
}
