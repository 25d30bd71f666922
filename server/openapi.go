package server

import (
	"net/http"
	"strconv"

	"github.com/hitl-sh/hitl/openapi"
)

// openAPIPath is where the OpenAPI document of this API is served, to
// anyone (see isPublic).
const openAPIPath = "/api/v1/openapi.json"

// handleOpenAPI serves GET /api/v1/openapi.json: the OpenAPI 3.1 document
// of this server's HTTP API (the openapi package's).
func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) error {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Length", strconv.Itoa(len(openapi.JSON)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(openapi.JSON)
	return nil
}
