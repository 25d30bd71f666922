package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/hitl-sh/hitl"
)

// The human_feedback contract's routes (docs/contracts/human-feedback.md):
// the pending list and the submit endpoint, on top of the same engine.

// feedbackSubmitRequest is the human_feedback contract's POST /api/human-feedback/submit.
type feedbackSubmitRequest struct {
	UniqueID string          `json:"unique_id"`
	Response json.RawMessage `json:"response"`
}

// feedbackSubmitResponse answers it; success is kept for the contract's
// UI.
type feedbackSubmitResponse struct {
	UniqueID string `json:"unique_id"`
	Status   string `json:"status"`
	Message  string `json:"message"`
	Success  bool   `json:"success"`
}

// handleFeedbackSubmit answers an interaction named by its id or by the
// idempotency key (the contract's unique_id) of a pending interaction.
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
	if _, err := s.broker.RespondIdempotent(ctx, id, req.Response, r.Header.Get(hitl.IdempotencyKeyHeader)); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, feedbackSubmitResponse{
		UniqueID: req.UniqueID, Status: "success", Message: "feedback submitted", Success: true,
	})
	return nil
}

// maxCandidates bounds the interactions named in the conflict over a
// unique_id that names several.
const maxCandidates = 20

// resolveUniqueID maps the human_feedback contract's unique_id to an
// interaction id: the interaction with that id, or the one pending
// interaction with that idempotency key that the caller may see.
//
// Idempotency keys are unique per agent only, so a key may name pending
// questions of several agents ("deploy prod?" and "delete database?"),
// and an agent may even choose another interaction's id as its key.
// Such a unique_id is never resolved by guessing: it is a conflict that
// names the candidates, to be answered by interaction id. An interaction
// id that names a question no longer pending is taken as meant, so the
// answer is refused with what became of it.
func (s *Server) resolveUniqueID(r *http.Request, uniqueID string) (string, error) {
	ctx := r.Context()
	byID, err := s.broker.Answerable(ctx, uniqueID)
	if err != nil && !errors.Is(err, hitl.ErrNotFound) {
		return "", err
	}
	keyed, _, err := s.broker.List(ctx, hitl.ListFilter{IdempotencyKey: uniqueID, Status: hitl.StatusPending, Limit: maxCandidates})
	if err != nil {
		return "", err
	}
	var ids []string
	if byID != nil {
		ids = append(ids, byID.ID)
	}
	for _, in := range keyed {
		if byID == nil || in.ID != byID.ID {
			ids = append(ids, in.ID)
		}
	}
	switch {
	case len(ids) > 1 && (byID == nil || byID.Status == hitl.StatusPending):
		return "", &ambiguousError{
			err:        hitl.Errorf(hitl.ECONFLICT, "unique_id %q names %d pending feedback requests; answer one of them by its interaction_id (candidates)", uniqueID, len(ids)),
			candidates: ids,
		}
	case len(ids) > 0:
		return ids[0], nil
	}
	// Nothing pending has that key: the newest interaction that had it,
	// so that the answer is refused with what became of it (409, 410).
	list, _, err := s.broker.List(ctx, hitl.ListFilter{IdempotencyKey: uniqueID, Limit: 1})
	if err != nil {
		return "", err
	}
	if len(list) == 0 {
		return "", hitl.Errorf(hitl.ENOTFOUND, "no feedback request with unique_id %q", uniqueID)
	}
	return list[0].ID, nil
}

// feedbackRequest is one entry of the human_feedback contract's pending
// list.
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

// pendingPage is how many interactions the pending list reads at a time:
// what it holds in memory, beside the entry being written.
const pendingPage = 50

// handleFeedbackPending serves the human_feedback contract's GET
// /api/human-feedback/pending: every pending interaction the caller may see, newest first, written as
// it is read (see jsonList).
//
// An entry's unique_id is its idempotency key, which a UI posts back to
// answer it, unless another listed entry would have the same unique_id
// (two agents chose the same key): such entries get their interaction
// id instead, which names one question only. So the list is read twice:
// first for the unique_ids alone, then to be written. Should a key come
// to name two questions between the two reads, the submit that uses it
// is refused as a conflict (see resolveUniqueID), never guessed.
func (s *Server) handleFeedbackPending(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	shared := make(map[string]int)
	err := s.eachPending(ctx, func(in *hitl.Interaction) error {
		shared[uniqueID(in)]++
		return nil
	})
	if err != nil {
		return err
	}
	out := startList(w, "requests") // {"requests": […]}
	written := make(map[string]bool)
	err = s.eachPending(ctx, func(in *hitl.Interaction) error {
		fr := newFeedbackRequest(in)
		if shared[fr.UniqueID] > 1 || written[fr.UniqueID] {
			fr.UniqueID = in.ID
		}
		written[fr.UniqueID] = true
		out.add(fr)
		return out.err
	})
	if err == nil {
		err = out.end("")
	}
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("list pending feedback requests", "error", err)
		}
		abortList()
	}
	return nil
}

// eachPending calls fn with each pending interaction the caller may see,
// newest first, up to maxPendingListed, reading pendingPage at a time.
func (s *Server) eachPending(ctx context.Context, fn func(*hitl.Interaction) error) error {
	cursor := ""
	for n := 0; n < maxPendingListed; {
		f := hitl.ListFilter{Status: hitl.StatusPending, Limit: min(pendingPage, maxPendingListed-n), Cursor: cursor}
		list, next, err := s.broker.List(ctx, f)
		if err != nil {
			return err
		}
		for _, in := range list {
			if err := fn(in); err != nil {
				return err
			}
		}
		n += len(list)
		if next == "" {
			return nil
		}
		cursor = next
	}
	return nil
}

// uniqueID is the human_feedback contract's unique_id of in: its
// idempotency key, or its interaction id when it has none.
func uniqueID(in *hitl.Interaction) string {
	if in.IdempotencyKey != "" {
		return in.IdempotencyKey
	}
	return in.ID
}

func newFeedbackRequest(in *hitl.Interaction) feedbackRequest {
	fr := feedbackRequest{
		UniqueID:        uniqueID(in),
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
	for _, o := range in.Options {
		fr.Options = append(fr.Options, o.Label)
	}
	return fr
}
