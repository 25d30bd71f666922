package server

import (
	"net/http"
	"strconv"

	"github.com/hitl-sh/hitl"
)

// timelinePage is the body of GET /api/v1/interactions/{id}/events.
type timelinePage struct {
	Events     []*hitl.Event `json:"events"`
	NextCursor *string       `json:"next_cursor"`
}

// handleTimeline serves GET /api/v1/interactions/{id}/events?limit=&cursor=:
// the interaction's events, oldest first (what the inbox's detail view
// shows as its timeline). The cursor is the seq of the last event of the
// previous page; next_cursor is null on the last page.
func (s *Server) handleTimeline(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var after int64
	if v := q.Get("cursor"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return hitl.Errorf(hitl.EINVALID, "cursor must be a next_cursor of this list")
		}
		after = n
	}
	limit := hitl.MaxListLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return hitl.Errorf(hitl.EINVALID, "limit must be a positive integer")
		}
		limit = n
	}
	evs, err := s.broker.Timeline(r.Context(), r.PathValue("id"), after, limit)
	if err != nil {
		return err
	}
	page := timelinePage{Events: evs}
	if page.Events == nil {
		page.Events = []*hitl.Event{}
	}
	if len(evs) == limit {
		next := strconv.FormatInt(evs[len(evs)-1].Seq, 10)
		page.NextCursor = &next
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}
