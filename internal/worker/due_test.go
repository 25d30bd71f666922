package worker

import (
	"testing"
	"time"
)

// TestDue: a worker skips its look at the due rows only after a look,
// before the next row it saw is due, and within the recheck.
func TestDue(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	var d Due
	if _, ok := d.Skip(t0, time.Minute); ok {
		t.Fatal("skipped before any look")
	}
	d.Looked(t0, time.Time{}, false) // nothing due
	if wait, ok := d.Skip(t0.Add(10*time.Second), time.Minute); !ok || wait != 50*time.Second {
		t.Errorf("nothing due, 10 s after the look: skip %v, %v; want 50 s", wait, ok)
	}
	if _, ok := d.Skip(t0.Add(time.Minute), time.Minute); ok {
		t.Error("skipped a minute after the look")
	}
	d.Looked(t0, t0.Add(5*time.Second), true) // a retry in 5 s
	if wait, ok := d.Skip(t0.Add(time.Second), time.Minute); !ok || wait != 4*time.Second {
		t.Errorf("a row due in 5 s, 1 s after the look: skip %v, %v; want 4 s", wait, ok)
	}
	if _, ok := d.Skip(t0.Add(5*time.Second), time.Minute); ok {
		t.Error("skipped when a row is due")
	}
	d.Forget()
	if _, ok := d.Skip(t0.Add(time.Second), time.Minute); ok {
		t.Error("skipped after Forget")
	}
	d.Looked(t0, t0, true) // due already: claimed elsewhere a moment ago
	if _, ok := d.Skip(t0, time.Minute); ok {
		t.Error("skipped with a row already due")
	}
}
