package server

import (
	"math"
	"net/http"
	"time"

	"github.com/hitl-sh/hitl"
)

// claimRequest is the optional body of POST .../claim.
type claimRequest struct {
	// TTLSeconds is how long the claim holds; 0 means the server's
	// default (--claim-ttl).
	TTLSeconds float64 `json:"ttl_seconds"`
	Channel    string  `json:"channel"`
}

// handleClaim serves POST /api/v1/interactions/{id}/claim: the caller
// is on it. 200 with the interaction, its claimed set.
func (s *Server) handleClaim(w http.ResponseWriter, r *http.Request) error {
	var req claimRequest
	if r.ContentLength != 0 {
		if err := decodeJSON(w, r, &req); err != nil && !isEmptyBody(err) {
			return err
		}
	}
	if req.TTLSeconds < 0 || math.IsNaN(req.TTLSeconds) || req.TTLSeconds > hitl.MaxClaimTTL.Seconds() {
		return hitl.Errorf(hitl.EINVALID, "ttl_seconds must be between 1 and %d", int(hitl.MaxClaimTTL.Seconds()))
	}
	ctx, err := withChannel(r.Context(), req.Channel)
	if err != nil {
		return err
	}
	in, err := s.broker.Claim(ctx, r.PathValue("id"), time.Duration(req.TTLSeconds*float64(time.Second)))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, in)
	return nil
}

// handleRelease serves DELETE /api/v1/interactions/{id}/claim: the
// caller's claim ends (an admin may end anyone's).
func (s *Server) handleRelease(w http.ResponseWriter, r *http.Request) error {
	in, err := s.broker.Release(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, in)
	return nil
}
