package server

import (
	"net/http"
)

// handleCounts serves GET /api/v1/interactions/counts: how many
// interactions the list's filters select, in all, per agent, per type
// and expiring within five minutes (hitl.InteractionCounts), of those the
// caller may see.
func (s *Server) handleCounts(w http.ResponseWriter, r *http.Request) error {
	f, err := listFilter(r.URL.Query())
	if err != nil {
		return err
	}
	counts, err := s.broker.Counts(r.Context(), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, counts)
	return nil
}
