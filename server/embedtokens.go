package server

import (
	"net/http"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/auth"
)

// embedTokenRequest is the body of POST /api/v1/embed-tokens.
type embedTokenRequest struct {
	User       string   `json:"user"`
	SessionIDs []string `json:"session_ids"`
	// TTL is the token's life in seconds: hitl.DefaultEmbedTTL when 0,
	// at most hitl.MaxEmbedTTL.
	TTL float64 `json:"ttl"`
}

// embedTokenCreated is the answer to POST /api/v1/embed-tokens: the token
// and its secret, shown this once.
type embedTokenCreated struct {
	*hitl.EmbedToken
	Token string `json:"token"`
}

// embedTokenRoutes registers the embed tokens' API, for admins: the
// backend of the site that embeds <hitl-prompt> mints a token for the
// person on its page.
func (s *Server) embedTokenRoutes() {
	s.mux.HandleFunc("POST /api/v1/embed-tokens", s.handle(s.handleCreateEmbedToken))
	s.mux.HandleFunc("GET /api/v1/embed-tokens", s.handle(s.handleListEmbedTokens))
	s.mux.HandleFunc("DELETE /api/v1/embed-tokens/{id}", s.handle(s.handleRevokeEmbedToken))
}

// embedAdmin returns the identities store when the caller is an admin.
func (s *Server) embedAdmin(r *http.Request) (hitl.Identities, error) {
	if hitl.CallerFrom(r.Context()).Role != hitl.RoleAdmin {
		return nil, hitl.Errorf(hitl.EFORBIDDEN, "embed tokens are minted by admins (the backend of the site that embeds the prompt)")
	}
	if s.auth.ids == nil {
		return nil, hitl.Errorf(hitl.EINVALID, "embed tokens need a database with users (this server keeps none)")
	}
	return s.auth.ids, nil
}

// handleCreateEmbedToken serves POST /api/v1/embed-tokens: 201 with the
// token, for one user and a few of their sessions.
func (s *Server) handleCreateEmbedToken(w http.ResponseWriter, r *http.Request) error {
	ids, err := s.embedAdmin(r)
	if err != nil {
		return err
	}
	var req embedTokenRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if err := hitl.ValidateName("user", req.User); err != nil {
		return err
	}
	if err := hitl.ValidateEmbedSessions(req.SessionIDs); err != nil {
		return err
	}
	ttl := time.Duration(req.TTL * float64(time.Second))
	switch {
	case req.TTL < 0 || ttl > hitl.MaxEmbedTTL:
		return hitl.Errorf(hitl.EINVALID, "ttl must be between 1 and %d seconds", int(hitl.MaxEmbedTTL.Seconds()))
	case req.TTL == 0:
		ttl = hitl.DefaultEmbedTTL
	case ttl < time.Second:
		ttl = time.Second
	}
	secret, hash, prefix := auth.NewEmbedToken()
	now := s.auth.now().UTC().Truncate(time.Millisecond)
	t := &hitl.EmbedToken{
		ID:         auth.NewID(),
		User:       req.User,
		SessionIDs: req.SessionIDs,
		Prefix:     prefix,
		Hash:       hash,
		CreatedBy:  hitl.CallerFrom(r.Context()).Name,
		CreatedAt:  now,
		ExpiresAt:  now.Add(ttl),
	}
	if err := ids.CreateEmbedToken(r.Context(), t); err != nil {
		return err
	}
	s.log.Info("embed token minted", "id", t.ID, "user", t.User, "sessions", len(t.SessionIDs), "expires_at", t.ExpiresAt, "by", t.CreatedBy)
	writeJSON(w, http.StatusCreated, embedTokenCreated{EmbedToken: t, Token: secret})
	return nil
}

// handleListEmbedTokens serves GET /api/v1/embed-tokens[?user=NAME]: the
// tokens that have not expired, without their secrets.
func (s *Server) handleListEmbedTokens(w http.ResponseWriter, r *http.Request) error {
	ids, err := s.embedAdmin(r)
	if err != nil {
		return err
	}
	list, err := ids.EmbedTokensOf(r.Context(), r.URL.Query().Get("user"), s.auth.now())
	if err != nil {
		return err
	}
	if list == nil {
		list = []*hitl.EmbedToken{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"embed_tokens": list})
	return nil
}

// handleRevokeEmbedToken serves DELETE /api/v1/embed-tokens/{id}: 204.
// The prompts using the token stop at their next credential check.
func (s *Server) handleRevokeEmbedToken(w http.ResponseWriter, r *http.Request) error {
	ids, err := s.embedAdmin(r)
	if err != nil {
		return err
	}
	if err := ids.RevokeEmbedToken(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	s.log.Info("embed token revoked", "id", r.PathValue("id"), "by", hitl.CallerFrom(r.Context()).Name)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
