package server

import (
	"net/http"

	"github.com/hitl-sh/hitl"
)

// handleWebSocket serves /ws. (Being written: see ws.go.)
func (s *Server) handleWebSocket(w http.ResponseWriter, r *http.Request) error {
	return hitl.Errorf(hitl.EUNAVAILABLE, "not yet")
}

// handleEvents serves /api/v1/events as SSE. (Being written: see sse.go.)
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) error {
	return hitl.Errorf(hitl.EUNAVAILABLE, "not yet")
}
