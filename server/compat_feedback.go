package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/hitl-sh/hitl"
)

// The human_feedback contract's routes (docs/contracts/human-feedback.md):
// the pending list and the submit endpoint, on top of the same engine.

// feedbackSubmitRequest is the first seed's POST /api/human-feedback/submit.
type feedbackSubmitRequest struct {
	UniqueID string          `json:"unique_id"`
	Response json.RawMessage `json:"response"`
}

// feedbackSubmitResponse answers it; success is kept for the seed's UI.
type feedbackSubmitResponse struct {
	UniqueID string `json:"unique_id"`
	Status   string `json:"status"`
	Message  string `json:"message"`
	Success  bool   `json:"success"`
}

// handleFeedbackSubmit answers an interaction named by its id or by the
// idempotency key (the seed's unique_id) of a pending interaction.
func (s *Server) handleFeedbackSubmit(w http.ResponseWriter, r *http.Request) error {
	var req feedbackSubmitRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if req.UniqueID == "" {
		return hitl.Errorf(hitl.EINVALID, "unique_id is required")
	}
	if err := requireValue("response", req.Response); err != nil {
		return err
	}
	ctx := r.Context()
	id, err := s.resolveUniqueID(r, req.UniqueID)
	if err != nil {
		return err
	}
	ctx, _ = withChannel(ctx, hitl.ChannelWeb)
	if _, err := s.broker.Respond(ctx, id, req.Response); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, feedbackSubmitResponse{
		UniqueID: req.UniqueID, Status: "success", Message: "feedback submitted", Success: true,
	})
	return nil
}

// resolveUniqueID maps the first seed's unique_id to an interaction id: an
// interaction id as is (refused as Respond would refuse it), else the
// newest pending interaction with that idempotency key that the caller
// may see.
func (s *Server) resolveUniqueID(r *http.Request, uniqueID string) (string, error) {
	in, err := s.broker.Answerable(r.Context(), uniqueID)
	if err == nil {
		return in.ID, nil
	} else if !errors.Is(err, hitl.ErrNotFound) {
		return "", err
	}
	list, _, err := s.broker.List(r.Context(), hitl.ListFilter{IdempotencyKey: uniqueID, Limit: 1})
	if err != nil {
		return "", err
	}
	if len(list) == 0 {
		return "", hitl.Errorf(hitl.ENOTFOUND, "no feedback request with unique_id %q", uniqueID)
	}
	return list[0].ID, nil
}

// feedbackRequest is one entry of the first seed's pending list.
type feedbackRequest struct {
	UniqueID        string          `json:"unique_id"`
	InteractionID   string          `json:"interaction_id"`
	InteractionType hitl.Type       `json:"interaction_type"`
	MessageForUser  string          `json:"message_for_user"`
	Context         string          `json:"context"`
	Options         []string        `json:"options"`
	DefaultResponse json.RawMessage `json:"default_response,omitempty"`
	SourceAgent     string          `json:"source_agent,omitempty"`
	CreatedAt       time.Time       `json:"created_at"`
	ExpiresAt       time.Time       `json:"expires_at"`
}

// maxPendingListed bounds GET /api/human-feedback/pending.
const maxPendingListed = 1000

// handleFeedbackPending serves the first seed's GET /api/human-feedback/pending:
// every pending interaction, newest first.
func (s *Server) handleFeedbackPending(w http.ResponseWriter, r *http.Request) error {
	out := []feedbackRequest{}
	cursor := ""
	for len(out) < maxPendingListed {
		list, next, err := s.broker.List(r.Context(), hitl.ListFilter{Status: hitl.StatusPending, Limit: hitl.MaxListLimit, Cursor: cursor})
		if err != nil {
			return err
		}
		for _, in := range list {
			out = append(out, newFeedbackRequest(in))
		}
		if next == "" {
			break
		}
		cursor = next
	}
	writeJSON(w, http.StatusOK, map[string]any{"requests": out})
	return nil
}

func newFeedbackRequest(in *hitl.Interaction) feedbackRequest {
	fr := feedbackRequest{
		UniqueID:        in.IdempotencyKey,
		InteractionID:   in.ID,
		InteractionType: in.Type,
		MessageForUser:  in.Question,
		Context:         in.Context,
		Options:         make([]string, 0, len(in.Options)),
		DefaultResponse: in.DefaultResponse,
		SourceAgent:     in.SourceAgent,
		CreatedAt:       in.CreatedAt,
		ExpiresAt:       in.Deadline,
	}
	if fr.UniqueID == "" {
		fr.UniqueID = in.ID
	}
	for _, o := range in.Options {
		fr.Options = append(fr.Options, o.Label)
	}
	return fr
}
