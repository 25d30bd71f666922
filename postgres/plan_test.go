package postgres

import (
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/jackc/pgx/v5"
)

// TestQueriesReadTheirIndexes: on 10,000 interactions (a quarter pending,
// a third of those without a deadline; some in sessions, a few with a
// workflow; analyzed), PostgreSQL plans the deadline timers, the due
// counts and every list ListInteractions makes on the index meant for it,
// never a scan of the table. The lists read their index in the query's
// order, with no sort, except the engine's recount of the few questions
// with a workflow, which PostgreSQL may sort. It fails when an index loses
// a column or a query stops matching its expression (checked: the next
// deadline ordered by deadline alone is sorted from another index).
func TestQueriesReadTheirIndexes(t *testing.T) {
	s := openStore(t)
	ctx := t.Context()
	err := s.with(ctx, func(c *pgx.Conn) error {
		_, err := c.Exec(ctx, `INSERT INTO interactions
				(id, type, question, created_at, deadline, status, session_id, workflow, source_agent)
			SELECT 'i-' || i, 'approval', 'Deploy?', now() - make_interval(secs => i),
				CASE WHEN i % 3 = 0 THEN NULL ELSE now() + make_interval(secs => i - 5000) END,
				CASE WHEN i % 4 = 0 THEN 'pending' ELSE 'answered' END,
				CASE WHEN i % 10 = 0 THEN 's-' || (i / 10 % 100) ELSE '' END,
				CASE WHEN i % 50 = 0 THEN '{}' END,
				'agent-' || (i % 5)
			FROM generate_series(1, 10000) i;
			ANALYZE interactions`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	newest := encodeCursor(now.Add(-time.Hour).UnixMilli(), "i-3600")
	due := encodeDueCursor(&hitl.Interaction{ID: "i-100", Deadline: now.Add(-time.Hour)})

	// want is what the plan must contain, one of them when several.
	type query struct {
		name      string
		want      []string
		mayBeSort bool
		sql       string
		args      []any
	}
	const (
		pendingDue = "interactions_pending_due"
		created    = "Index Scan using interactions_created "
		status     = "Index Scan using interactions_status_created "
	)
	count, countArgs := countDueQuery(hitl.ListFilter{Status: hitl.StatusPending}, now.Add(time.Minute))
	queries := []query{
		{name: "next deadline", want: []string{"Index Scan using " + pendingDue}, sql: sqlNextDeadline},
		{name: "due", want: []string{"Index Scan using " + pendingDue}, sql: sqlDue, args: []any{now, 100}},
		{name: "count due", want: []string{" " + pendingDue}, sql: count, args: countArgs},
	}
	for _, tc := range []struct {
		name      string
		want      []string
		mayBeSort bool
		f         hitl.ListFilter
		cursor    string
	}{
		{"all", []string{created}, false, hitl.ListFilter{}, newest},
		// A quarter are pending, three in four answered: walking the newest
		// of all and skipping the others is as good.
		{"pending", []string{status, created}, false, hitl.ListFilter{Status: hitl.StatusPending}, newest},
		{"answered", []string{status, created}, false, hitl.ListFilter{Status: hitl.StatusAnswered}, newest},
		{"session", []string{"Index Scan using interactions_session "}, false, hitl.ListFilter{SessionID: "s-7"}, newest},
		{"workflow", []string{" interactions_workflow"}, true, hitl.ListFilter{Status: hitl.StatusPending, Workflow: true, Limit: 500}, newest},
		{"pending by deadline", []string{"Index Scan using " + pendingDue}, false, hitl.ListFilter{Status: hitl.StatusPending, Sort: hitl.SortDeadline}, due},
	} {
		for _, next := range []bool{false, true} {
			f, name := tc.f, tc.name
			if next {
				f.Cursor, name = tc.cursor, name+", next page"
			}
			q, args, _, err := listQuery(f)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			queries = append(queries, query{name: name, want: tc.want, mayBeSort: tc.mayBeSort, sql: q, args: args})
		}
	}

	for _, q := range queries {
		plan := explain(t, s, q.sql, q.args...)
		found := false
		for _, w := range q.want {
			found = found || strings.Contains(plan, w)
		}
		if !found || strings.Contains(plan, "Seq Scan") || (!q.mayBeSort && strings.Contains(plan, "Sort")) {
			t.Errorf("%s: plan\n%s\nwant one of %q, no scan of the table, no sort", q.name, plan, q.want)
		}
	}
}

// explain returns PostgreSQL's plan for q with args, without costs.
func explain(t *testing.T, s *Store, q string, args ...any) string {
	t.Helper()
	var lines []string
	err := s.with(t.Context(), func(c *pgx.Conn) error {
		rows, err := c.Query(t.Context(), `EXPLAIN (COSTS OFF) `+q, args...)
		if err != nil {
			return err
		}
		lines, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		t.Fatalf("explain %s: %v", q, err)
	}
	return strings.Join(lines, "\n")
}
