package sqlite

import (
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
)

// TestListWorkflowUsesItsIndex: the engine's recount lists the pending
// interactions with a workflow through interactions_workflow, so it reads
// those alone, not every pending row.
func TestListWorkflowUsesItsIndex(t *testing.T) {
	s := openInternal(t)
	q, args, _, err := listQuery(hitl.ListFilter{Status: hitl.StatusPending, Workflow: true, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	got := queryPlan(t, s, q, args...)
	if !strings.Contains(got, "interactions_workflow") || strings.Contains(got, "TEMP B-TREE") {
		t.Errorf("plan %q: want a range of interactions_workflow in order, with no sort", got)
	}
}

// TestCountPendingReadsItsIndex: the inbox's counts of pending questions
// read interactions_pending_counts alone (a covering index), in the order
// the grouping wants, not every pending row of the table.
func TestCountPendingReadsItsIndex(t *testing.T) {
	s := openInternal(t)
	got := queryPlan(t, s, `SELECT source_agent, type, count(*), coalesce(sum(deadline IS NOT NULL AND deadline <= 0), 0)
		FROM interactions INDEXED BY interactions_pending_counts WHERE status = 'pending' GROUP BY source_agent, type`)
	if !strings.Contains(got, "COVERING INDEX interactions_pending_counts") || strings.Contains(got, "TEMP B-TREE") {
		t.Errorf("plan %q: want the covering index interactions_pending_counts in order, with no sort", got)
	}
}

// queryPlan returns SQLite's plan for q, its steps joined by "; ".
func queryPlan(t *testing.T, s *Store, q string, args ...any) string {
	t.Helper()
	rows, err := s.r.Query(`EXPLAIN QUERY PLAN `+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "; ")
}

// TestNewestFirstListsReadTheirIndexesBackwards: the creation indexes are
// ascending (migration 22), and ListInteractions' newest-first pages, the
// first and the next, read them backwards, in order, with no sort.
func TestNewestFirstListsReadTheirIndexesBackwards(t *testing.T) {
	s := openInternal(t)
	cursor := encodeListCursor(&hitl.Interaction{ID: "x", CreatedAt: time.UnixMilli(1)}, hitl.SortNewest)
	for _, tc := range []struct {
		name  string
		f     hitl.ListFilter
		index string
	}{
		{"all", hitl.ListFilter{}, "interactions_created"},
		{"pending", hitl.ListFilter{Status: hitl.StatusPending}, "interactions_status_created"},
		{"answered", hitl.ListFilter{Status: hitl.StatusAnswered}, "interactions_status_created"},
		{"session", hitl.ListFilter{SessionID: "s-1"}, "interactions_session"},
	} {
		for _, next := range []bool{false, true} {
			f := tc.f
			if next {
				f.Cursor = cursor
			}
			q, args, _, err := listQuery(f)
			if err != nil {
				t.Fatal(err)
			}
			got := queryPlan(t, s, q, args...)
			if !strings.Contains(got, tc.index) || strings.Contains(got, "TEMP B-TREE") {
				t.Errorf("%s, next page %t: plan %q: want %s in order, with no sort", tc.name, next, got, tc.index)
			}
		}
	}
}

// TestDeadlinesReadThePendingDueIndex: the deadline timers' next deadline
// and due questions are ranges of interactions_pending_due, in order.
func TestDeadlinesReadThePendingDueIndex(t *testing.T) {
	s := openInternal(t)
	for _, tc := range []struct {
		name string
		q    string
		args []any
	}{
		{"next deadline", sqlNextDeadline, nil},
		{"due", sqlDue, []any{1, 10}},
	} {
		got := queryPlan(t, s, tc.q, tc.args...)
		if !strings.Contains(got, "interactions_pending_due") || strings.Contains(got, "TEMP B-TREE") {
			t.Errorf("%s: plan %q: want interactions_pending_due in order, with no sort", tc.name, got)
		}
	}
}
