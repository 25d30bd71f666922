package storetest

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

// testListVisibleTo checks ListFilter.VisibleTo against the domain's own
// rule (Targets.Includes), for targets of every shape, alone, with other
// filters and across pages.
func testListVisibleTo(t *testing.T, s hitl.Store) {
	targeted := func(n int, tg *hitl.Targets) *hitl.Interaction {
		in := ask(t, hitl.CreateRequest{}, "agent", at(n))
		in.Targets = tg
		return create(t, s, in)
	}
	all := []*hitl.Interaction{
		targeted(0, nil),
		targeted(1, &hitl.Targets{}), // empty lists: untargeted too
		targeted(2, &hitl.Targets{Users: []string{"alice"}}),
		targeted(3, &hitl.Targets{Users: []string{"alice", "bob"}}),
		targeted(4, &hitl.Targets{Groups: []string{"ops"}}),
		targeted(5, &hitl.Targets{Users: []string{"carol"}, Groups: []string{"security"}}),
		targeted(6, &hitl.Targets{Groups: []string{"ops", "security"}}),
		targeted(7, &hitl.Targets{Users: []string{`o'neil "x"`, "%"}}),
		targeted(8, &hitl.Targets{Users: []string{"Alice"}}), // names are case-sensitive
	}
	resolve(t, s, all[3].ID, answer(`"done"`, at(20)))

	audiences := []struct {
		name string
		a    hitl.Audience
		want []int // indexes into all, oldest first
	}{
		{"User", hitl.Audience{User: "alice"}, []int{0, 1, 2, 3}},
		{"UserAndGroup", hitl.Audience{User: "bob", Groups: []string{"ops"}}, []int{0, 1, 3, 4, 6}},
		{"GroupsOnly", hitl.Audience{User: "dave", Groups: []string{"dev", "security"}}, []int{0, 1, 5, 6}},
		{"UserNamedInMixed", hitl.Audience{User: "carol"}, []int{0, 1, 5}},
		{"Nobody", hitl.Audience{User: "eve"}, []int{0, 1}},
		{"Empty", hitl.Audience{}, []int{0, 1}},
		{"Quotes", hitl.Audience{User: `o'neil "x"`}, []int{0, 1, 7}},
		{"Percent", hitl.Audience{User: "%"}, []int{0, 1, 7}},
		{"Case", hitl.Audience{User: "Alice", Groups: []string{"OPS"}}, []int{0, 1, 8}},
	}
	for _, tt := range audiences {
		t.Run(tt.name, func(t *testing.T) {
			var want []*hitl.Interaction
			for i, in := range all {
				if in.Targets.Includes(tt.a) != slices.Contains(tt.want, i) {
					t.Fatalf("the test disagrees with Targets.Includes on interaction %d", i)
				}
				if slices.Contains(tt.want, i) {
					want = append(want, in)
				}
			}
			a := tt.a
			got, _ := listAll(t, s, hitl.ListFilter{VisibleTo: &a}, 2)
			if d := cmp.Diff(newestFirst(want), ids(got)); d != "" {
				t.Errorf("visible in pages of 2 (-want +got):\n%s", d)
			}
			page, _ := list(t, s, hitl.ListFilter{VisibleTo: &a, Status: hitl.StatusPending})
			var pending []*hitl.Interaction
			for _, in := range want {
				if in.ID != all[3].ID {
					pending = append(pending, in)
				}
			}
			if d := cmp.Diff(newestFirst(pending), ids(page)); d != "" {
				t.Errorf("visible and pending (-want +got):\n%s", d)
			}
		})
	}
}
