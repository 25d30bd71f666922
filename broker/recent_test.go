package broker

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
)

// event returns an event of seq carrying id in status.
func event(seq int64, id string, status hitl.Status) *hitl.Event {
	return &hitl.Event{Seq: seq, InteractionID: id, Interaction: &hitl.Interaction{ID: id, Question: "Deploy?", Status: status}}
}

func TestRecentKeepsTheNewestState(t *testing.T) {
	r := newRecent(1<<20, 1<<20)
	r.put(event(1, "a", hitl.StatusPending))
	if got := r.get("a"); got == nil || got.Status != hitl.StatusPending {
		t.Fatalf("get a = %+v, want pending", got)
	}
	r.put(event(3, "a", hitl.StatusAnswered))
	r.put(event(1, "a", hitl.StatusPending)) // late: an older event
	r.put(event(4, "a", hitl.StatusPending)) // never back out of a terminal state
	if got := r.get("a"); got.Status != hitl.StatusAnswered {
		t.Errorf("get a = %s, want answered", got.Status)
	}
	if got := r.get("b"); got != nil {
		t.Errorf("get b = %+v, want nil", got)
	}
	r.put(&hitl.Event{Seq: 5, InteractionID: "c"})                          // no interaction
	r.put(&hitl.Event{Seq: 6, InteractionID: "c", Interaction: r.get("a")}) // not its own
	if r.len() != 1 {
		t.Errorf("len = %d, want 1", r.len())
	}
}

func TestRecentEvictsOldestFirstWithinItsBytes(t *testing.T) {
	one := sizeOf(event(1, "id-000", hitl.StatusPending).Interaction)
	r := newRecent(10*one, one)
	for i := range 25 {
		r.put(event(int64(i+1), fmt.Sprintf("id-%03d", i), hitl.StatusPending))
	}
	if r.len() != 10 || r.bytes > r.max {
		t.Fatalf("len %d, %d bytes, want 10 within %d", r.len(), r.bytes, r.max)
	}
	for i := range 25 {
		if held := r.get(fmt.Sprintf("id-%03d", i)) != nil; held != (i >= 15) {
			t.Errorf("id-%03d held = %v", i, held)
		}
	}
	if len(r.fifo)-r.head != 10 || len(r.fifo) > 20 {
		t.Errorf("fifo holds %d slots, %d live; want the evicted front compacted", len(r.fifo), len(r.fifo)-r.head)
	}

	// id-003's state of seq 4 is gone: an older event of it (or of any
	// interaction not held) must not bring back a state that may be stale.
	r.put(event(2, "id-003", hitl.StatusPending))
	r.put(event(15, "new", hitl.StatusPending))
	if r.get("id-003") != nil || r.get("new") != nil {
		t.Error("an event older than an evicted one was added")
	}
	r.put(event(26, "new", hitl.StatusPending))
	if r.get("new") == nil {
		t.Error("a new event was not added")
	}
}

func TestRecentSkipsWhatIsTooBig(t *testing.T) {
	r := newRecent(64<<10, 2<<10)
	ev := event(1, "big", hitl.StatusPending)
	ev.Interaction.Context = strings.Repeat("x", 2<<10)
	r.put(ev)
	if r.get("big") != nil {
		t.Error("an interaction over the entry limit was kept")
	}
	ev.Interaction.Metadata = map[string]any{"k": []any{"v", 1.0}}
	if small, withMeta := sizeOf(event(1, "x", hitl.StatusPending).Interaction), sizeOf(ev.Interaction); withMeta <= small {
		t.Errorf("sizeOf ignores context and metadata: %d <= %d", withMeta, small)
	}
}

func TestRecentForgetsPurged(t *testing.T) {
	one := sizeOf(event(1, "id-000", hitl.StatusPending).Interaction)
	r := newRecent(4*one, one)
	for i := range 4 {
		r.put(event(int64(i+1), fmt.Sprintf("id-%03d", i), hitl.StatusAnswered))
	}
	r.forget([]string{"id-000", "id-002", "unknown"})
	if r.get("id-000") != nil || r.get("id-002") != nil || r.len() != 2 || r.bytes != 2*one {
		t.Fatalf("after forget: len %d, %d bytes; want id-001 and id-003 in %d", r.len(), r.bytes, 2*one)
	}
	// Room for two more without evicting; the forgotten slots, evicted in
	// turn, take no bytes with them.
	r.put(event(5, "id-004", hitl.StatusPending))
	r.put(event(6, "id-005", hitl.StatusPending))
	if r.len() != 4 || r.bytes != 4*one {
		t.Errorf("len %d, %d bytes; want 4 in %d", r.len(), r.bytes, 4*one)
	}
	r.put(event(7, "id-006", hitl.StatusPending))
	if r.get("id-001") != nil || r.get("id-006") == nil || r.bytes != 4*one {
		t.Errorf("after one more: id-001 held %v, %d bytes; want id-001 evicted within %d", r.get("id-001") != nil, r.bytes, 4*one)
	}
}
