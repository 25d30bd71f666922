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

// TestDecodeGroupTargets: a group's targets as a store keeps them; targets
// that name no one make no targeted group.
func TestDecodeGroupTargets(t *testing.T) {
	for _, c := range []struct {
		json    string
		keep    bool
		wantErr bool
	}{
		{"", true, false},
		{`{"users":["alice"]}`, true, false},
		{`{"users":[],"groups":[]}`, false, false},
		{`{"users":`, false, true},
	} {
		var g CountGroup
		var b []byte
		if c.json != "" {
			b = []byte(c.json)
		}
		keep, err := g.DecodeGroupTargets(b)
		if keep != c.keep || (err != nil) != c.wantErr {
			t.Errorf("DecodeGroupTargets(%q) = %v, %v; want %v, error %v", c.json, keep, err, c.keep, c.wantErr)
		}
	}
}

// TestWideningTargets: the targets of a stored interaction whose
// escalation may still add to them, and nil once its step has fired.
func TestWideningTargets(t *testing.T) {
	in := &Interaction{Escalation: []EscalationStep{{After: "10m", AddTargets: &Targets{Groups: []string{"sre"}}}}}
	targets := []byte(`{"users":["alice"]}`)
	got, err := WideningTargets(targets, in.WorkflowJSON())
	if err != nil || got == nil || got.Users[0] != "alice" {
		t.Fatalf("step to fire: %+v, %v; want alice's targets", got, err)
	}
	in.EscalatedSteps = []int{0}
	if got, err := WideningTargets(targets, in.WorkflowJSON()); err != nil || got != nil {
		t.Errorf("step fired: %+v, %v; want nil", got, err)
	}
	if got, err := WideningTargets(targets, nil); err != nil || got != nil {
		t.Errorf("no workflow: %+v, %v; want nil", got, err)
	}
}
