package storetest

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

// createN creates n free-text interactions, the i-th created at at(i) by
// agent, and returns them oldest first.
func createN(t *testing.T, s hitl.Store, n int, agent string) []*hitl.Interaction {
	t.Helper()
	out := make([]*hitl.Interaction, n)
	for i := range n {
		out[i] = create(t, s, ask(t, hitl.CreateRequest{}, agent, at(i)))
	}
	return out
}

// newestFirst returns the IDs of list in reverse order.
func newestFirst(list []*hitl.Interaction) []string {
	out := ids(list)
	slices.Reverse(out)
	return out
}

// list returns one page, failing t on error.
func list(t *testing.T, s hitl.Store, f hitl.ListFilter) ([]*hitl.Interaction, string) {
	t.Helper()
	page, next, err := s.ListInteractions(t.Context(), f)
	if err != nil {
		t.Fatalf("ListInteractions(%+v): %v", f, err)
	}
	return page, next
}

// listAll pages through every interaction matching f with page size limit
// and returns them, failing t if a page is too long or the pages repeat.
func listAll(t *testing.T, s hitl.Store, f hitl.ListFilter, limit int) (all []*hitl.Interaction, pages int) {
	t.Helper()
	f.Limit = limit
	for {
		page, next := list(t, s, f)
		pages++
		if len(page) > limit {
			t.Fatalf("page %d: got %d interactions, want at most %d", pages, len(page), limit)
		}
		all = append(all, page...)
		if next == "" {
			return all, pages
		}
		if len(page) == 0 || pages > 100 {
			t.Fatalf("page %d: got %d interactions and next cursor %q; want progress", pages, len(page), next)
		}
		f.Cursor = next
	}
}

func testListNewestFirst(t *testing.T, s hitl.Store) {
	all := createN(t, s, 5, "agent")
	page, next := list(t, s, hitl.ListFilter{})
	if d := cmp.Diff(newestFirst(all), ids(page)); d != "" {
		t.Errorf("order (-want +got):\n%s", d)
	}
	if next != "" {
		t.Errorf("next cursor: got %q, want none", next)
	}
	if d := cmp.Diff(all[4], page[0]); d != "" {
		t.Errorf("listed interaction differs from created (-want +got):\n%s", d)
	}
}

func testListFilters(t *testing.T, s hitl.Store) {
	a := createN(t, s, 3, "agent-a") // a[0] answered, a[1] cancelled, a[2] pending
	b := create(t, s, ask(t, hitl.CreateRequest{IdempotencyKey: "key-1"}, "agent-b", at(10)))
	c := create(t, s, ask(t, hitl.CreateRequest{IdempotencyKey: "key-1"}, "agent-c", at(11)))
	d := create(t, s, ask(t, hitl.CreateRequest{IdempotencyKey: "key-2"}, "agent-a", at(12)))
	resolve(t, s, a[0].ID, answer(`"ok"`, at(20)))
	resolve(t, s, a[1].ID, cancel(at(21)))
	resolve(t, s, c.ID, expire(at(22)))

	tests := []struct {
		name string
		f    hitl.ListFilter
		want []*hitl.Interaction
	}{
		{"None", hitl.ListFilter{}, []*hitl.Interaction{d, c, b, a[2], a[1], a[0]}},
		{"Pending", hitl.ListFilter{Status: hitl.StatusPending}, []*hitl.Interaction{d, b, a[2]}},
		{"Answered", hitl.ListFilter{Status: hitl.StatusAnswered}, []*hitl.Interaction{a[0]}},
		{"Cancelled", hitl.ListFilter{Status: hitl.StatusCancelled}, []*hitl.Interaction{a[1]}},
		{"Expired", hitl.ListFilter{Status: hitl.StatusExpired}, []*hitl.Interaction{c}},
		{"Key", hitl.ListFilter{IdempotencyKey: "key-1"}, []*hitl.Interaction{c, b}},
		{"UnknownKey", hitl.ListFilter{IdempotencyKey: "key-9"}, nil},
		{"CreatedBy", hitl.ListFilter{CreatedBy: "agent-a"}, []*hitl.Interaction{d, a[2], a[1], a[0]}},
		{"KeyAndCreatedBy", hitl.ListFilter{IdempotencyKey: "key-1", CreatedBy: "agent-b"}, []*hitl.Interaction{b}},
		{"StatusAndCreatedBy", hitl.ListFilter{Status: hitl.StatusPending, CreatedBy: "agent-a"}, []*hitl.Interaction{d, a[2]}},
		{"StatusAndKey", hitl.ListFilter{Status: hitl.StatusExpired, IdempotencyKey: "key-1"}, []*hitl.Interaction{c}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, next := list(t, s, tt.f)
			if d := cmp.Diff(ids(tt.want), ids(page)); d != "" {
				t.Errorf("IDs (-want +got):\n%s", d)
			}
			if next != "" {
				t.Errorf("next cursor: got %q, want none", next)
			}
			for _, in := range page {
				if tt.f.Status != "" && in.Status != tt.f.Status {
					t.Errorf("%s: got status %s, want %s", in.ID, in.Status, tt.f.Status)
				}
			}
		})
	}
}

func testListPaging(t *testing.T, s hitl.Store) {
	all := createN(t, s, 7, "agent")
	want := newestFirst(all)

	t.Run("ThreePages", func(t *testing.T) {
		f := hitl.ListFilter{Limit: 3}
		var got []string
		var sizes []int
		for {
			page, next := list(t, s, f)
			got = append(got, ids(page)...)
			sizes = append(sizes, len(page))
			if next == "" || len(sizes) > 5 {
				break
			}
			f.Cursor = next
		}
		if d := cmp.Diff([]int{3, 3, 1}, sizes); d != "" {
			t.Errorf("page sizes (-want +got):\n%s", d)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("IDs across pages (-want +got):\n%s", d)
		}
	})
	t.Run("ExactMultiple", func(t *testing.T) {
		// 7 in pages of 7: the only page has no next cursor.
		page, next := list(t, s, hitl.ListFilter{Limit: 7})
		if len(page) != 7 || next != "" {
			t.Errorf("got %d interactions and next %q, want 7 and none", len(page), next)
		}
	})
	t.Run("Filtered", func(t *testing.T) {
		for _, in := range all[:4] {
			resolve(t, s, in.ID, cancel(at(100)))
		}
		got, pages := listAll(t, s, hitl.ListFilter{Status: hitl.StatusCancelled}, 2)
		if d := cmp.Diff(newestFirst(all[:4]), ids(got)); d != "" {
			t.Errorf("cancelled across pages (-want +got):\n%s", d)
		}
		if pages != 2 {
			t.Errorf("got %d pages, want 2", pages)
		}
	})
}

// testListPagingStableUnderInserts checks that a cursor keeps its place
// while newer interactions are created.
func testListPagingStableUnderInserts(t *testing.T, s hitl.Store) {
	all := createN(t, s, 6, "agent")
	page1, next := list(t, s, hitl.ListFilter{Limit: 3})
	for i := range 3 {
		create(t, s, ask(t, hitl.CreateRequest{}, "agent", at(50+i)))
	}
	page2, next2 := list(t, s, hitl.ListFilter{Limit: 3, Cursor: next})
	got := append(ids(page1), ids(page2)...)
	if d := cmp.Diff(newestFirst(all), got); d != "" {
		t.Errorf("IDs across pages (-want +got):\n%s", d)
	}
	if next2 != "" {
		t.Errorf("next cursor after the oldest: got %q, want none", next2)
	}
}

func testListLimits(t *testing.T, s hitl.Store) {
	all := createN(t, s, hitl.DefaultListLimit+1, "agent")
	page, next := list(t, s, hitl.ListFilter{})
	if len(page) != hitl.DefaultListLimit || next == "" {
		t.Errorf("limit 0: got %d interactions and next %q, want %d and a cursor", len(page), next, hitl.DefaultListLimit)
	}
	page, next = list(t, s, hitl.ListFilter{Limit: hitl.MaxListLimit * 10})
	if len(page) != len(all) || next != "" {
		t.Errorf("limit over max: got %d interactions and next %q, want %d and none", len(page), next, len(all))
	}
	page, _ = list(t, s, hitl.ListFilter{Limit: 1})
	if len(page) != 1 || page[0].ID != all[len(all)-1].ID {
		t.Errorf("limit 1: got %v, want [%s]", ids(page), all[len(all)-1].ID)
	}
}

func testListBadCursor(t *testing.T, s hitl.Store) {
	createN(t, s, 2, "agent")
	for _, c := range []string{"not a cursor!", "%%%", "\x00"} {
		_, _, err := s.ListInteractions(t.Context(), hitl.ListFilter{Cursor: c})
		wantCode(t, "ListInteractions(cursor "+c+")", err, hitl.EINVALID)
	}
}

func testCount(t *testing.T, s hitl.Store) {
	all := createN(t, s, 6, "agent")
	resolve(t, s, all[0].ID, answer(`"a"`, at(10)))
	resolve(t, s, all[1].ID, answer(`"b"`, at(10)))
	resolve(t, s, all[2].ID, cancel(at(10)))
	want := map[hitl.Status]int{
		hitl.StatusPending:   3,
		hitl.StatusAnswered:  2,
		hitl.StatusCancelled: 1,
		hitl.StatusExpired:   0,
	}
	for status, n := range want {
		got, err := s.CountInteractions(t.Context(), status)
		if err != nil {
			t.Fatalf("CountInteractions(%s): %v", status, err)
		}
		if got != n {
			t.Errorf("CountInteractions(%s): got %d, want %d", status, got, n)
		}
	}
}
