package server

import (
	"context"
	"net/http"
	"time"

	"github.com/hitl-sh/hitl"
)

// handleHealth answers while the process runs.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "version": s.version})
	return nil
}

// handleReady answers 200 when the store is reachable, 503 otherwise.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.broker.Ping(ctx); err != nil {
		s.log.Warn("not ready", "error", err)
		return hitl.Errorf(hitl.EUNAVAILABLE, "store is not reachable")
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	return nil
}
