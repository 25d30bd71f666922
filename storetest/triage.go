package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
)

// triageSet creates the interactions the triage tests list: three
// agents, three types, mixed deadlines (one none), one answered by Slack
// and one on the web. It returns them by name.
func triageSet(t *testing.T, s hitl.Store) map[string]*hitl.Interaction {
	t.Helper()
	mk := func(name, agent string, typ hitl.Type, created, timeout int, question, context string) *hitl.Interaction {
		req := hitl.CreateRequest{Type: typ, Question: question, Context: context, Timeout: float64(timeout), SourceAgent: agent}
		if typ == hitl.TypeSingleChoice {
			req.Options = []hitl.Option{{Key: "a", Label: "A"}, {Key: "b", Label: "B"}}
		}
		in := ask(t, req, agent, at(created))
		if timeout == 0 {
			in.Deadline = time.Time{}
		}
		return create(t, s, in)
	}
	set := map[string]*hitl.Interaction{
		"deployLate":  mk("deployLate", "deployer", hitl.TypeApproval, 0, 3600, "Deploy build 1432?", ""),
		"deploySoon":  mk("deploySoon", "deployer", hitl.TypeApproval, 1, 120, "Deploy build 1433?", "Ünïcode CONTEXT"),
		"pickEnv":     mk("pickEnv", "planner", hitl.TypeSingleChoice, 2, 600, "Which environment?", "staging is DOWN"),
		"noDeadline":  mk("noDeadline", "planner", hitl.TypeFreeText, 3, 0, "Any notes?", ""),
		"writeNotes":  mk("writeNotes", "writer", hitl.TypeFreeText, 4, 240, "Release notes wording?", "draft"),
		"answeredWeb": mk("answeredWeb", "writer", hitl.TypeFreeText, 5, 60, "Title?", ""),
		"answeredSlk": mk("answeredSlk", "deployer", hitl.TypeApproval, 6, 60, "Roll back?", ""),
		"sameDue":     mk("sameDue", "writer", hitl.TypeFreeText, 119, 2, "Same deadline as deploySoon?", ""),
	}
	resolve(t, s, set["answeredWeb"].ID, answer(`"v2"`, at(30)))
	tr := answer(`true`, at(31))
	tr.Via = hitl.ChannelSlack
	resolve(t, s, set["answeredSlk"].ID, tr)
	return set
}

// names maps interactions back to their names in set.
func names(set map[string]*hitl.Interaction, list []*hitl.Interaction) []string {
	byID := map[string]string{}
	for name, in := range set {
		byID[in.ID] = name
	}
	out := make([]string, len(list))
	for i, in := range list {
		out[i] = byID[in.ID]
	}
	return out
}

func testListTriageFilters(t *testing.T, s hitl.Store) {
	set := triageSet(t, s)
	pending := hitl.StatusPending
	tests := []struct {
		name string
		f    hitl.ListFilter
		want []string
	}{
		{"Agent", hitl.ListFilter{Status: pending, Agents: []string{"planner"}}, []string{"noDeadline", "pickEnv"}},
		{"Agents", hitl.ListFilter{Status: pending, Agents: []string{"planner", "writer"}}, []string{"sameDue", "writeNotes", "noDeadline", "pickEnv"}},
		{"UnknownAgent", hitl.ListFilter{Agents: []string{"nobody"}}, []string{}},
		{"Type", hitl.ListFilter{Types: []hitl.Type{hitl.TypeApproval}}, []string{"answeredSlk", "deploySoon", "deployLate"}},
		{"TypeAndAgent", hitl.ListFilter{Types: []hitl.Type{hitl.TypeFreeText}, Agents: []string{"writer"}, Status: pending}, []string{"sameDue", "writeNotes"}},
		{"Channel", hitl.ListFilter{Channels: []string{hitl.ChannelSlack}}, []string{"answeredSlk"}},
		{"Channels", hitl.ListFilter{Channels: []string{hitl.ChannelSlack, hitl.ChannelWeb}}, []string{"answeredSlk", "answeredWeb"}},
		{"QueryQuestion", hitl.ListFilter{Query: "deploy BUILD"}, []string{"deploySoon", "deployLate"}},
		{"QueryContext", hitl.ListFilter{Query: "down"}, []string{"pickEnv"}},
		{"QueryUnicodeCase", hitl.ListFilter{Query: "üNÏCODE"}, []string{"deploySoon"}},
		{"QueryLikeCharacters", hitl.ListFilter{Query: "%"}, []string{}},
		{"QueryAndAgent", hitl.ListFilter{Query: "?", Agents: []string{"writer"}}, []string{"sameDue", "answeredWeb", "writeNotes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, _ := list(t, s, tt.f)
			if d := cmp.Diff(tt.want, names(set, page)); d != "" {
				t.Errorf("listed (-want +got):\n%s", d)
			}
		})
	}
}

func testListByDeadline(t *testing.T, s hitl.Store) {
	set := triageSet(t, s)
	// deploySoon and sameDue are due at the same time: by id then.
	tie := []string{"deploySoon", "sameDue"}
	if set["sameDue"].ID < set["deploySoon"].ID {
		tie = []string{"sameDue", "deploySoon"}
	}
	want := append(append([]string{}, tie...), "writeNotes", "pickEnv", "deployLate", "noDeadline")
	f := hitl.ListFilter{Status: hitl.StatusPending, Sort: hitl.SortDeadline}
	page, next := list(t, s, f)
	if d := cmp.Diff(want, names(set, page)); d != "" {
		t.Errorf("one page (-want +got):\n%s", d)
	}
	if next != "" {
		t.Errorf("next cursor: got %q, want none", next)
	}
	for _, limit := range []int{1, 2, 4} {
		all, _ := listAll(t, s, f, limit)
		if d := cmp.Diff(want, names(set, all)); d != "" {
			t.Errorf("pages of %d (-want +got):\n%s", limit, d)
		}
	}
	// A cursor is only good for the order it was made for.
	_, byDeadline := list(t, s, hitl.ListFilter{Status: hitl.StatusPending, Sort: hitl.SortDeadline, Limit: 2})
	_, newest := list(t, s, hitl.ListFilter{Status: hitl.StatusPending, Limit: 2})
	for _, c := range []struct {
		cursor string
		sort   hitl.ListSort
	}{{byDeadline, hitl.SortNewest}, {newest, hitl.SortDeadline}, {"bm90IGEgY3Vyc29y", hitl.SortDeadline}} {
		_, _, err := s.ListInteractions(t.Context(), hitl.ListFilter{Cursor: c.cursor, Sort: c.sort})
		wantErr(t, "ListInteractions with another order's cursor", err, hitl.Errorf(hitl.EINVALID, ""))
	}
	// Newest first with the new filters still pages as before.
	all, _ := listAll(t, s, hitl.ListFilter{Status: hitl.StatusPending, Sort: hitl.SortNewest}, 2)
	if d := cmp.Diff([]string{"sameDue", "writeNotes", "noDeadline", "pickEnv", "deploySoon", "deployLate"}, names(set, all)); d != "" {
		t.Errorf("newest first (-want +got):\n%s", d)
	}
}

func testCountMatching(t *testing.T, s hitl.Store) {
	triageSet(t, s)
	soon := at(1 + 120) // deploySoon and sameDue are due then; writeNotes at 244
	count := func(f hitl.ListFilter) *hitl.InteractionCounts {
		t.Helper()
		c, err := s.CountMatching(t.Context(), f, soon)
		if err != nil {
			t.Fatalf("CountMatching(%+v): %v", f, err)
		}
		return c
	}
	tests := []struct {
		name string
		f    hitl.ListFilter
		want hitl.InteractionCounts
	}{
		{"Pending", hitl.ListFilter{Status: hitl.StatusPending}, hitl.InteractionCounts{
			Total: 6, Expiring: 2,
			ByAgent: map[string]int{"deployer": 2, "planner": 2, "writer": 2},
			ByType:  map[hitl.Type]int{hitl.TypeApproval: 2, hitl.TypeSingleChoice: 1, hitl.TypeFreeText: 3},
		}},
		// ByAgent leaves out the agent filter, ByType the type filter.
		{"AgentChosen", hitl.ListFilter{Status: hitl.StatusPending, Agents: []string{"writer"}}, hitl.InteractionCounts{
			Total: 2, Expiring: 1,
			ByAgent: map[string]int{"deployer": 2, "planner": 2, "writer": 2},
			ByType:  map[hitl.Type]int{hitl.TypeFreeText: 2},
		}},
		{"TypeChosen", hitl.ListFilter{Status: hitl.StatusPending, Types: []hitl.Type{hitl.TypeApproval}}, hitl.InteractionCounts{
			Total: 2, Expiring: 1,
			ByAgent: map[string]int{"deployer": 2},
			ByType:  map[hitl.Type]int{hitl.TypeApproval: 2, hitl.TypeSingleChoice: 1, hitl.TypeFreeText: 3},
		}},
		{"Query", hitl.ListFilter{Status: hitl.StatusPending, Query: "DEPLOY"}, hitl.InteractionCounts{
			Total: 3, Expiring: 2,
			ByAgent: map[string]int{"deployer": 2, "writer": 1},
			ByType:  map[hitl.Type]int{hitl.TypeApproval: 2, hitl.TypeFreeText: 1},
		}},
		{"Visible", hitl.ListFilter{Status: hitl.StatusPending, VisibleTo: &hitl.Audience{User: "bob"}}, hitl.InteractionCounts{
			Total: 6, Expiring: 2,
			ByAgent: map[string]int{"deployer": 2, "planner": 2, "writer": 2},
			ByType:  map[hitl.Type]int{hitl.TypeApproval: 2, hitl.TypeSingleChoice: 1, hitl.TypeFreeText: 3},
		}},
		{"Nothing", hitl.ListFilter{Agents: []string{"nobody"}, Types: []hitl.Type{hitl.TypeForm}}, hitl.InteractionCounts{
			ByAgent: map[string]int{}, ByType: map[hitl.Type]int{},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(&tt.want, count(tt.f)); d != "" {
				t.Errorf("counts (-want +got):\n%s", d)
			}
		})
	}
}
