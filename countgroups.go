package hitl

import (
	"encoding/json"
	"fmt"
	"slices"
)

// CountGroup is how many interactions one agent asked of one type, and how
// many of them expire within ExpiringWindow: a store counts them in one
// pass over the interactions a filter selects (its agents and types
// aside), and CountGroups folds the groups into InteractionCounts.
type CountGroup struct {
	Agent    string
	Type     Type
	N        int
	Expiring int
	// Targets is the targets the group's interactions share, in
	// PendingCounts.Targeted; nil in every other count.
	Targets *Targets
}

// PendingCounts is a store's count of its pending interactions at one
// position of its event log, from which the engine keeps the inbox's
// counts with the events after it (Store.CountPending).
type PendingCounts struct {
	// Groups counts every pending interaction per agent and type.
	Groups []CountGroup
	// Targeted counts the targeted ones among them (Targets.Untargeted
	// false) per agent, type and targets: what a responder may see is the
	// untargeted ones and the targeted groups that include them.
	Targeted []CountGroup
	// Widening holds the targets of the pending interactions whose
	// escalation may still add targets (MayWiden), by id.
	Widening map[string]*Targets
	// Seen holds the sequence numbers of the events after the position
	// given, in order: the counts include what they did.
	Seen []int64
}

// DecodeGroupTargets sets g's targets from a store's JSON (nil: none) and
// reports whether g is kept: a group whose targets name no one is counted
// as untargeted, so it is not a targeted group.
func (g *CountGroup) DecodeGroupTargets(targets []byte) (bool, error) {
	if targets == nil {
		return true, nil
	}
	if err := json.Unmarshal(targets, &g.Targets); err != nil {
		return false, fmt.Errorf("decode targets: %w", err)
	}
	return !g.Targets.Untargeted(), nil
}

// WideningTargets decodes a pending interaction's targets and workflow as
// a store keeps them (JSON) and returns its targets when its escalation
// may still add to them (Interaction.MayWiden), else nil.
func WideningTargets(targets, workflow []byte) (*Targets, error) {
	var in Interaction
	if targets != nil {
		if err := json.Unmarshal(targets, &in.Targets); err != nil {
			return nil, fmt.Errorf("decode targets: %w", err)
		}
	}
	if err := in.SetWorkflowJSON(workflow); err != nil {
		return nil, fmt.Errorf("decode workflow: %w", err)
	}
	if !in.MayWiden() {
		return nil, nil
	}
	return in.Targets, nil
}

// CountGroups folds groups, counted with every filter of f but its agents
// and types, into f's InteractionCounts: Total and Expiring keep f's
// agents and types, ByAgent keeps only its types and ByType only its
// agents.
func CountGroups(groups []CountGroup, f ListFilter) *InteractionCounts {
	out := &InteractionCounts{ByAgent: map[string]int{}, ByType: map[Type]int{}}
	for _, g := range groups {
		agentOK := len(f.Agents) == 0 || slices.Contains(f.Agents, g.Agent)
		typeOK := len(f.Types) == 0 || slices.Contains(f.Types, g.Type)
		if typeOK {
			out.ByAgent[g.Agent] += g.N
		}
		if agentOK {
			out.ByType[g.Type] += g.N
		}
		if agentOK && typeOK {
			out.Total += g.N
			out.Expiring += g.Expiring
		}
	}
	return out
}
