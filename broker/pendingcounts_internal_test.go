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
	pc.load([]hitl.CountGroup{{Agent: "a", Type: hitl.TypeApproval, N: 1}}, nil)
	if _, ok := pc.read(); ok {
		t.Error("counts read after giving up; want the store to be read instead")
	}
}
