package worker_test

import (
	"slices"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/worker"
)

// kicked reports whether the intake has a kick waiting, and takes it.
func kicked(in *worker.Intake[int]) bool {
	select {
	case <-in.Kicks():
		return true
	default:
		return false
	}
}

// TestIntakeQueuesAndWakes: Add queues in order and wakes the worker once
// however many items wait; Take empties the intake.
func TestIntakeQueuesAndWakes(t *testing.T) {
	in := worker.NewIntake[int]()
	if kicked(in) {
		t.Fatal("a new intake woke its worker")
	}
	in.Add(1)
	in.Add(2)
	if !kicked(in) {
		t.Fatal("Add did not wake the worker")
	}
	if kicked(in) {
		t.Error("two Adds left two kicks; one covers both")
	}
	items, sweep := in.Take()
	if want := []int{1, 2}; !slices.Equal(items, want) || sweep {
		t.Errorf("Take() = %v, %v; want %v, false", items, sweep, want)
	}
	if items, sweep := in.Take(); len(items) != 0 || sweep {
		t.Errorf("second Take() = %v, %v; want nothing", items, sweep)
	}
}

// TestIntakeSweepDoesNotWake: a sweep is taken on the next step, once,
// and asking for it does not wake the worker (Wake does).
func TestIntakeSweepDoesNotWake(t *testing.T) {
	in := worker.NewIntake[int]()
	in.Sweep()
	if kicked(in) {
		t.Error("Sweep woke the worker")
	}
	in.Wake()
	if !kicked(in) {
		t.Error("Wake did not wake the worker")
	}
	if _, sweep := in.Take(); !sweep {
		t.Error("Take() did not ask for the sweep")
	}
	if _, sweep := in.Take(); sweep {
		t.Error("the sweep was asked for twice")
	}
}

// TestIntakeFullAsksForSweep: past MaxQueue items, Add asks for a sweep
// instead of queueing more.
func TestIntakeFullAsksForSweep(t *testing.T) {
	in := worker.NewIntake[int]()
	for i := range worker.MaxQueue + 5 {
		in.Add(i)
	}
	items, sweep := in.Take()
	if len(items) != worker.MaxQueue || !sweep {
		t.Errorf("Take() = %d items, sweep %v; want %d, true", len(items), sweep, worker.MaxQueue)
	}
}

// TestIntakeClosedDropsItems: Close drops what waits, and Add does
// nothing afterwards.
func TestIntakeClosedDropsItems(t *testing.T) {
	in := worker.NewIntake[int]()
	in.Add(1)
	kicked(in)
	in.Close()
	in.Add(2)
	if kicked(in) {
		t.Error("Add after Close woke the worker")
	}
	if items, _ := in.Take(); len(items) != 0 {
		t.Errorf("Take() after Close = %v, want nothing", items)
	}
}

// TestCreatedPending: only a created event with its interaction still
// pending is taken up.
func TestCreatedPending(t *testing.T) {
	pending := &hitl.Interaction{ID: "a", Status: hitl.StatusPending}
	answered := &hitl.Interaction{ID: "b", Status: hitl.StatusAnswered}
	for _, tc := range []struct {
		name string
		ev   *hitl.Event
		want bool
	}{
		{"created pending", &hitl.Event{Type: hitl.EventCreated, Interaction: pending}, true},
		{"created answered", &hitl.Event{Type: hitl.EventCreated, Interaction: answered}, false},
		{"created without interaction", &hitl.Event{Type: hitl.EventCreated}, false},
		{"answered", &hitl.Event{Type: hitl.EventAnswered, Interaction: pending}, false},
	} {
		got, ok := worker.CreatedPending(tc.ev)
		if ok != tc.want || ok && got != pending {
			t.Errorf("%s: CreatedPending() = %v, %v; want %v", tc.name, got, ok, tc.want)
		}
	}
}
