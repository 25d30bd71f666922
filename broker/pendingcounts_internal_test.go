package broker

import (
	"testing"

	"github.com/hitl-sh/hitl"
)

// TestPendingCountsGiveUpRatherThanHoldEverything: while the snapshot
// cannot be read the events told meanwhile are held, up to maxEarly; past
// that the counts give up (Counts keeps reading the store) instead of
// holding every event for ever, and a snapshot read late is not used.
func TestPendingCountsGiveUpRatherThanHoldEverything(t *testing.T) {
	var pc pendingCounts
	pc.loaded = make(chan struct{})
	in := &hitl.Interaction{SourceAgent: "a", Type: hitl.TypeApproval}
	for i := range maxEarly {
		pc.observe(&hitl.Event{Seq: int64(i + 1), Type: hitl.EventCreated, Interaction: in})
	}
	if pc.gaveUp() || len(pc.early) != maxEarly {
		t.Fatalf("after %d events: gave up %v, holding %d; want them all held", maxEarly, pc.gaveUp(), len(pc.early))
	}
	pc.observe(&hitl.Event{Seq: maxEarly + 1, Type: hitl.EventCreated, Interaction: in})
	if !pc.gaveUp() || pc.early != nil {
		t.Fatalf("one more: gave up %v, holding %d; want given up, nothing held", pc.gaveUp(), len(pc.early))
	}
	pc.load(&hitl.PendingCounts{Groups: []hitl.CountGroup{{Agent: "a", Type: hitl.TypeApproval, N: 1}}})
	if _, ok := pc.read(nil); ok {
		t.Error("counts read after giving up; want the store to be read instead")
	}
}

// TestPendingCountsFollowTargets: targeted questions count for those they
// target; a question whose escalation adds targets moves with it, and
// ends from the group it was counted in, even when its events are read
// after the escalation and carry the widened targets (as on another
// replica).
func TestPendingCountsFollowTargets(t *testing.T) {
	var pc pendingCounts
	pc.loaded = make(chan struct{})
	pc.load(&hitl.PendingCounts{
		Groups:   []hitl.CountGroup{{Agent: "a", Type: hitl.TypeApproval, N: 3}},
		Targeted: []hitl.CountGroup{{Agent: "a", Type: hitl.TypeApproval, N: 1, Targets: &hitl.Targets{Users: []string{"alice"}}}},
	})
	step := []hitl.EscalationStep{{After: "1m", AddTargets: &hitl.Targets{Groups: []string{"sre"}}}}
	ops := &hitl.Interaction{ID: "q-ops", SourceAgent: "a", Type: hitl.TypeApproval, Targets: &hitl.Targets{Groups: []string{"ops"}}, Escalation: step}
	widened := *ops
	widened.Targets, widened.EscalatedSteps = &hitl.Targets{Groups: []string{"ops", "sre"}}, []int{0}
	// q-late's created event is read after its step fired: it is counted
	// with the widened targets, and its escalated event moves nothing.
	late := widened
	late.ID = "q-late"
	seq := int64(0)
	tell := func(typ hitl.EventType, in *hitl.Interaction) {
		seq++
		pc.observe(&hitl.Event{Seq: seq, Type: typ, InteractionID: in.ID, Interaction: in})
	}
	total := func(a *hitl.Audience) int {
		groups, ok := pc.read(a)
		if !ok {
			t.Fatal("counts not ready")
		}
		n := 0
		for _, g := range groups {
			n += g.N
		}
		return n
	}
	alice := &hitl.Audience{User: "alice"}
	sre := &hitl.Audience{User: "carol", Groups: []string{"sre"}}
	opsMember := &hitl.Audience{User: "dan", Groups: []string{"ops"}}
	check := func(when string, all, forAlice, forSRE, forOps int) {
		t.Helper()
		if got := [4]int{total(nil), total(alice), total(sre), total(opsMember)}; got != [4]int{all, forAlice, forSRE, forOps} {
			t.Errorf("%s: all, alice, sre, ops = %v; want %v", when, got, [4]int{all, forAlice, forSRE, forOps})
		}
	}
	check("snapshot", 3, 3, 2, 2)
	tell(hitl.EventCreated, ops)
	tell(hitl.EventCreated, &late)
	check("created", 5, 3, 3, 4)
	tell(hitl.EventEscalated, &widened)
	tell(hitl.EventEscalated, &late)
	check("escalated", 5, 3, 4, 4)
	// Answered: each leaves the group it is counted in.
	answeredOps := widened
	answeredOps.Status = hitl.StatusAnswered
	tell(hitl.EventAnswered, &answeredOps)
	answeredLate := late
	answeredLate.Status = hitl.StatusAnswered
	tell(hitl.EventAnswered, &answeredLate)
	check("answered", 3, 3, 2, 2)
	if len(pc.widening) != 0 || len(pc.targets) != 1 {
		t.Errorf("after the ends: widening %v, target sets %d; want none, and alice's alone", pc.widening, len(pc.targets))
	}
}
