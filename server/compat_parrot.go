package server

import (
	"encoding/json"
	"net/http"

	"github.com/hitl-sh/hitl"
)

// The AI-Parrot HITL contract's respond route
// (docs/contracts/ai-parrot-hitl.md), on top of the same engine.

// hitlRespondRequest is the second seed's POST /api/v1/agents/hitl/respond.
type hitlRespondRequest struct {
	InteractionID string          `json:"interaction_id"`
	Value         json.RawMessage `json:"value"`
	ResponseType  hitl.Type       `json:"response_type,omitempty"`
}

// handleHITLRespond answers through the second seed's contract: 200
// {"ok":true,"interaction_id"} only when the answer was recorded.
func (s *Server) handleHITLRespond(w http.ResponseWriter, r *http.Request) error {
	var req hitlRespondRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if req.InteractionID == "" {
		return hitl.Errorf(hitl.EINVALID, "interaction_id is required")
	}
	if len(req.Value) == 0 {
		return hitl.Errorf(hitl.EINVALID, "value is required")
	}
	if req.ResponseType != "" {
		in, err := s.broker.Answerable(r.Context(), req.InteractionID)
		if err != nil {
			return err
		}
		if req.ResponseType != in.Type {
			return hitl.Errorf(hitl.EVALUE, "response_type %q does not match the interaction's type %q", req.ResponseType, in.Type)
		}
	}
	ctx, _ := withChannel(r.Context(), hitl.ChannelWeb)
	if _, err := s.broker.Respond(ctx, req.InteractionID, req.Value); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "interaction_id": req.InteractionID})
	return nil
}
