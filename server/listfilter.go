package server

import (
	"net/url"
	"strconv"

	"github.com/hitl-sh/hitl"
)

// listFilter reads the filters of GET /api/v1/interactions and its counts
// from the query: status, idempotency_key, session_id, project, agent, type and
// channel (each repeatable: any of), q (search), sort, cursor and limit. The broker
// checks the values.
func listFilter(q url.Values) (hitl.ListFilter, error) {
	f := hitl.ListFilter{
		Status:         hitl.Status(q.Get("status")),
		IdempotencyKey: q.Get("idempotency_key"),
		Cursor:         q.Get("cursor"),
		Agents:         q["agent"],
		Channels:       q["channel"],
		Query:          q.Get("q"),
		SessionID:      q.Get("session_id"),
		Project:        q.Get("project"),
		Sort:           hitl.ListSort(q.Get("sort")),
	}
	for _, t := range q["type"] {
		f.Types = append(f.Types, hitl.Type(t))
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return f, hitl.Errorf(hitl.EINVALID, "limit must be a positive integer")
		}
		f.Limit = n
	}
	return f, nil
}
