package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

// testCountPending: the pending interactions counted per agent and type,
// the targeted ones per agent, type and targets, the targets of those
// whose escalation may still widen them, and the sequence numbers after
// the one given, from one snapshot.
func testCountPending(t *testing.T, s hitl.Store) {
	triageSet(t, s) // 8 created, 2 of them answered: 10 events
	pc, err := s.CountPending(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []hitl.CountGroup{
		{Agent: "deployer", Type: hitl.TypeApproval, N: 2},
		{Agent: "planner", Type: hitl.TypeFreeText, N: 1},
		{Agent: "planner", Type: hitl.TypeSingleChoice, N: 1},
		{Agent: "writer", Type: hitl.TypeFreeText, N: 2},
	}
	if d := cmp.Diff(want, sortGroups(pc.Groups)); d != "" {
		t.Errorf("groups (-want +got):\n%s", d)
	}
	if len(pc.Targeted) != 0 || len(pc.Widening) != 0 {
		t.Errorf("nothing targeted: got targeted %+v, widening %v; want none", pc.Targeted, pc.Widening)
	}
	seen := pc.Seen
	if len(seen) != 10 || !slices.IsSorted(seen) {
		t.Fatalf("seen after 0 = %v, want the 10 events' sequence numbers in order", seen)
	}
	after, err := s.CountPending(t.Context(), seen[6])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(after.Seen, seen[7:]) {
		t.Errorf("seen after %d = %v, want %v", seen[6], after.Seen, seen[7:])
	}
	last, err := s.LastEventSeq(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if none, err := s.CountPending(t.Context(), last); err != nil || len(none.Seen) != 0 {
		t.Errorf("seen after the last event = %v, %v; want none", none, err)
	}
}

// testCountPendingTargeted: targeted questions are counted among all and
// again by their targets; those whose escalation may still add targets
// are listed with their targets, until the step that adds them fires.
func testCountPendingTargeted(t *testing.T, s hitl.Store) {
	mk := func(agent string, targets *hitl.Targets, steps ...hitl.EscalationStep) *hitl.Interaction {
		return create(t, s, ask(t, hitl.CreateRequest{Type: hitl.TypeApproval, Question: "Deploy?", Timeout: 600,
			SourceAgent: agent, Targets: targets, Escalation: steps}, agent, base))
	}
	alice := &hitl.Targets{Users: []string{"alice"}}
	mk("deployer", nil)
	mk("deployer", alice)
	mk("deployer", &hitl.Targets{Users: []string{"alice"}}, hitl.EscalationStep{After: "10s", Remind: true}) // reminds only
	widens := mk("deployer", &hitl.Targets{Groups: []string{"ops"}}, hitl.EscalationStep{After: "30s", AddTargets: &hitl.Targets{Groups: []string{"sre"}}})
	mk("planner", nil, hitl.EscalationStep{After: "30s", Remind: true}) // untargeted: stays open to anyone
	ended := mk("planner", alice)
	resolve(t, s, ended.ID, answer(`true`, at(5)))

	pc, err := s.CountPending(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]hitl.CountGroup{
		{Agent: "deployer", Type: hitl.TypeApproval, N: 4},
		{Agent: "planner", Type: hitl.TypeApproval, N: 1},
	}, sortGroups(pc.Groups)); d != "" {
		t.Errorf("groups (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]hitl.CountGroup{
		{Agent: "deployer", Type: hitl.TypeApproval, N: 1, Targets: &hitl.Targets{Groups: []string{"ops"}}},
		{Agent: "deployer", Type: hitl.TypeApproval, N: 2, Targets: alice},
	}, sortGroups(pc.Targeted)); d != "" {
		t.Errorf("targeted groups (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]*hitl.Targets{widens.ID: {Groups: []string{"ops"}}}, pc.Widening); d != "" {
		t.Errorf("widening (-want +got):\n%s", d)
	}

	if _, _, err := fireStep(t, s, widens.ID, 0, at(30)); err != nil {
		t.Fatal(err)
	}
	pc, err = s.CountPending(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]hitl.CountGroup{
		{Agent: "deployer", Type: hitl.TypeApproval, N: 1, Targets: &hitl.Targets{Groups: []string{"ops", "sre"}}},
		{Agent: "deployer", Type: hitl.TypeApproval, N: 2, Targets: alice},
	}, sortGroups(pc.Targeted)); d != "" {
		t.Errorf("targeted groups after the step (-want +got):\n%s", d)
	}
	if len(pc.Widening) != 0 {
		t.Errorf("widening after the step: %v, want none", pc.Widening)
	}
}

// sortGroups sorts groups by agent, type, then targets, for comparing.
func sortGroups(groups []hitl.CountGroup) []hitl.CountGroup {
	key := func(g hitl.CountGroup) string {
		k := g.Agent + "\x00" + string(g.Type)
		if g.Targets != nil {
			k += "\x00" + fmt.Sprint(g.Targets.Users, g.Targets.Groups)
		}
		return k
	}
	slices.SortFunc(groups, func(a, b hitl.CountGroup) int { return cmpString(key(a), key(b)) })
	return groups
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
