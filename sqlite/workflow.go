package sqlite

import (
	"fmt"

	"github.com/hitl-sh/hitl"
)

// setWorkflow sets in's consensus, requester, votes and claim from the
// workflow column (NULL for none).
func setWorkflow(in *hitl.Interaction, b []byte) error {
	if err := in.SetWorkflowJSON(b); err != nil {
		return fmt.Errorf("interaction %s: decode workflow: %w", in.ID, err)
	}
	return nil
}
