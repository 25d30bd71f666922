package storetest

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

// testPendingGroups: the pending interactions counted per agent and type,
// with the sequence numbers after the one given, from one snapshot.
func testPendingGroups(t *testing.T, s hitl.Store) {
	triageSet(t, s) // 8 created, 2 of them answered: 10 events
	groups, seen, err := s.PendingGroups(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(groups, func(a, b hitl.CountGroup) int {
		if a.Agent != b.Agent {
			return cmpString(a.Agent, b.Agent)
		}
		return cmpString(string(a.Type), string(b.Type))
	})
	want := []hitl.CountGroup{
		{Agent: "deployer", Type: hitl.TypeApproval, N: 2},
		{Agent: "planner", Type: hitl.TypeFreeText, N: 1},
		{Agent: "planner", Type: hitl.TypeSingleChoice, N: 1},
		{Agent: "writer", Type: hitl.TypeFreeText, N: 2},
	}
	if d := cmp.Diff(want, groups); d != "" {
		t.Errorf("groups (-want +got):\n%s", d)
	}
	if len(seen) != 10 || !slices.IsSorted(seen) {
		t.Fatalf("seen after 0 = %v, want the 10 events' sequence numbers in order", seen)
	}
	_, after, err := s.PendingGroups(t.Context(), seen[6])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(after, seen[7:]) {
		t.Errorf("seen after %d = %v, want %v", seen[6], after, seen[7:])
	}
	last, err := s.LastEventSeq(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, none, err := s.PendingGroups(t.Context(), last); err != nil || len(none) != 0 {
		t.Errorf("seen after the last event = %v, %v; want none", none, err)
	}
}

// testCountDue: the interactions a filter selects whose deadline is at or
// before a time (none without a deadline).
func testCountDue(t *testing.T, s hitl.Store) {
	triageSet(t, s)
	soon := at(1 + 120) // deploySoon and sameDue are due then
	for _, c := range []struct {
		name string
		f    hitl.ListFilter
		want int
	}{
		{"Pending", hitl.ListFilter{Status: hitl.StatusPending}, 2},
		{"Agent", hitl.ListFilter{Status: hitl.StatusPending, Agents: []string{"writer"}}, 1},
		{"Type", hitl.ListFilter{Status: hitl.StatusPending, Types: []hitl.Type{hitl.TypeSingleChoice}}, 0},
		{"AnyStatus", hitl.ListFilter{}, 4},                                        // and the two answered, due at 65 and 66
		{"Query", hitl.ListFilter{Status: hitl.StatusPending, Query: "deploy"}, 2}, // deploySoon, and sameDue by its question
	} {
		t.Run(c.name, func(t *testing.T) {
			n, err := s.CountDue(t.Context(), c.f, soon)
			if err != nil {
				t.Fatal(err)
			}
			if n != c.want {
				t.Errorf("CountDue(%+v) = %d, want %d", c.f, n, c.want)
			}
		})
	}
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
