package postgres

import (
	"fmt"

	"github.com/hitl-sh/hitl"
)

// setWorkflow sets in's consensus, requester, votes and claim from the
// workflow column (NULL for none).
func setWorkflow(in *hitl.Interaction, s *string) error {
	if s == nil {
		return in.SetWorkflowJSON(nil)
	}
	if err := in.SetWorkflowJSON([]byte(*s)); err != nil {
		return fmt.Errorf("interaction %s: decode workflow: %w", in.ID, err)
	}
	return nil
}
