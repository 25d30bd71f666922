package server

import (
	"net/http"
	"strconv"

	"github.com/hitl-sh/hitl"
)

// The rules API: rules decide actions without a person (see broker's
// rules.go for who may do what).
//
//	POST   /api/v1/rules       make a rule (admins): a hitl.RuleRequest; 201
//	GET    /api/v1/rules       {"rules": […], "next_cursor": …}, oldest first;
//	                           ?active=true, created_by, source_agent,
//	                           action_name, limit, cursor
//	GET    /api/v1/rules/{id}  one rule
//	DELETE /api/v1/rules/{id}  revoke it (its maker or an admin); the rule
//	                           is kept, with revoked_at and revoked_by

// handleCreateRule serves POST /api/v1/rules.
func (s *Server) handleCreateRule(w http.ResponseWriter, r *http.Request) error {
	var req hitl.RuleRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	rule, err := s.broker.CreateRule(r.Context(), req)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/api/v1/rules/"+rule.ID)
	writeJSON(w, http.StatusCreated, rule)
	return nil
}

// ruleList is a page of rules.
type ruleList struct {
	Rules      []*hitl.Rule `json:"rules"`
	NextCursor *string      `json:"next_cursor"`
}

// handleListRules serves GET /api/v1/rules.
func (s *Server) handleListRules(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := hitl.RuleFilter{
		CreatedBy:   q.Get("created_by"),
		SourceAgent: q.Get("source_agent"),
		ActionName:  q.Get("action_name"),
		Cursor:      q.Get("cursor"),
	}
	switch q.Get("active") {
	case "", "false":
	case "true":
		f.ActiveAt = s.broker.Now()
	default:
		return hitl.Errorf(hitl.EINVALID, "active must be true or false")
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return hitl.Errorf(hitl.EINVALID, "limit must be a positive integer")
		}
		f.Limit = n
	}
	list, next, err := s.broker.Rules(r.Context(), f)
	if err != nil {
		return err
	}
	resp := ruleList{Rules: list}
	if resp.Rules == nil {
		resp.Rules = []*hitl.Rule{}
	}
	if next != "" {
		resp.NextCursor = &next
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// handleGetRule serves GET /api/v1/rules/{id}.
func (s *Server) handleGetRule(w http.ResponseWriter, r *http.Request) error {
	rule, err := s.broker.Rule(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rule)
	return nil
}

// handleRevokeRule serves DELETE /api/v1/rules/{id}.
func (s *Server) handleRevokeRule(w http.ResponseWriter, r *http.Request) error {
	rule, err := s.broker.RevokeRule(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rule)
	return nil
}
