package hitl

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCountGroups: each count keeps the filters it is stated with.
func TestCountGroups(t *testing.T) {
	groups := []CountGroup{
		{Agent: "deployer", Type: TypeApproval, N: 3, Expiring: 1},
		{Agent: "deployer", Type: TypeFreeText, N: 2},
		{Agent: "writer", Type: TypeFreeText, N: 4, Expiring: 2},
	}
	tests := []struct {
		name string
		f    ListFilter
		want InteractionCounts
	}{
		{"All", ListFilter{}, InteractionCounts{Total: 9, Expiring: 3,
			ByAgent: map[string]int{"deployer": 5, "writer": 4},
			ByType:  map[Type]int{TypeApproval: 3, TypeFreeText: 6}}},
		{"Agent", ListFilter{Agents: []string{"writer"}}, InteractionCounts{Total: 4, Expiring: 2,
			ByAgent: map[string]int{"deployer": 5, "writer": 4},
			ByType:  map[Type]int{TypeFreeText: 4}}},
		{"Type", ListFilter{Types: []Type{TypeApproval}}, InteractionCounts{Total: 3, Expiring: 1,
			ByAgent: map[string]int{"deployer": 3},
			ByType:  map[Type]int{TypeApproval: 3, TypeFreeText: 6}}},
		{"Both", ListFilter{Agents: []string{"writer"}, Types: []Type{TypeApproval}}, InteractionCounts{
			ByAgent: map[string]int{"deployer": 3},
			ByType:  map[Type]int{TypeFreeText: 4}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(&tt.want, CountGroups(groups, tt.f)); d != "" {
				t.Errorf("counts (-want +got):\n%s", d)
			}
		})
	}
}
