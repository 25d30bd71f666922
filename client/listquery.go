package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/hitl-sh/hitl"
)

// listQuery returns the query of GET /api/v1/interactions (and its
// counts) for f.
func listQuery(f hitl.ListFilter) (url.Values, error) {
	if f.CreatedBy != "" {
		return nil, hitl.Errorf(hitl.EINVALID, "the HTTP API cannot filter by created_by")
	}
	if f.VisibleTo != nil {
		return nil, hitl.Errorf(hitl.EINVALID, "the HTTP API filters by the caller's own audience only")
	}
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("status", string(f.Status))
	set("cursor", f.Cursor)
	set("idempotency_key", f.IdempotencyKey)
	set("q", f.Query)
	set("session_id", f.SessionID)
	set("project", f.Project)
	set("sort", string(f.Sort))
	if f.Limit != 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	q["agent"] = f.Agents
	q["channel"] = f.Channels
	for _, t := range f.Types {
		q.Add("type", string(t))
	}
	for k, v := range q {
		if len(v) == 0 {
			delete(q, k)
		}
	}
	return q, nil
}

// withQuery returns path with q appended, if any.
func withQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// Counts returns how many interactions f selects (Cursor, Limit and Sort
// aside) among those the caller may see: in all, per agent, per type and
// expiring within five minutes (GET /api/v1/interactions/counts).
func (c *Client) Counts(ctx context.Context, f hitl.ListFilter) (*hitl.InteractionCounts, error) {
	f.Cursor, f.Limit, f.Sort = "", 0, ""
	q, err := listQuery(f)
	if err != nil {
		return nil, err
	}
	var out hitl.InteractionCounts
	if _, err := c.do(ctx, http.MethodGet, withQuery(interactionsPath+"/counts", q), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
