package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/hitl-sh/hitl"
)

// rulesPath is the rules API's collection.
const rulesPath = "/api/v1/rules"

// rulePath returns the path of one rule.
func rulePath(id string) (string, error) {
	if id == "" {
		return "", hitl.Errorf(hitl.EINVALID, "rule id is required")
	}
	return rulesPath + "/" + url.PathEscape(id), nil
}

// CreateRule makes a rule (POST /api/v1/rules); only admins may.
func (c *Client) CreateRule(ctx context.Context, req hitl.RuleRequest) (*hitl.Rule, error) {
	var r hitl.Rule
	if _, err := c.do(ctx, http.MethodPost, rulesPath, req, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// ruleList is a page of GET /api/v1/rules.
type ruleList struct {
	Rules      []*hitl.Rule `json:"rules"`
	NextCursor *string      `json:"next_cursor"`
}

// Rules returns a page of the rules the caller may see, oldest first, and
// the cursor of the next page ("" when there is none). A non-zero
// f.ActiveAt asks for the rules active now on the server's clock.
func (c *Client) Rules(ctx context.Context, f hitl.RuleFilter) ([]*hitl.Rule, string, error) {
	q := url.Values{}
	if !f.ActiveAt.IsZero() {
		q.Set("active", "true")
	}
	for k, v := range map[string]string{"created_by": f.CreatedBy, "source_agent": f.SourceAgent, "action_name": f.ActionName, "cursor": f.Cursor} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.Limit != 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	p := rulesPath
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	var resp ruleList
	if _, err := c.do(ctx, http.MethodGet, p, nil, &resp); err != nil {
		return nil, "", err
	}
	next := ""
	if resp.NextCursor != nil {
		next = *resp.NextCursor
	}
	return resp.Rules, next, nil
}

// Rule returns one rule (GET /api/v1/rules/{id}).
func (c *Client) Rule(ctx context.Context, id string) (*hitl.Rule, error) {
	p, err := rulePath(id)
	if err != nil {
		return nil, err
	}
	var r hitl.Rule
	if _, err := c.do(ctx, http.MethodGet, p, nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// RevokeRule revokes a rule (DELETE /api/v1/rules/{id}) and returns it,
// kept with revoked_at and revoked_by.
func (c *Client) RevokeRule(ctx context.Context, id string) (*hitl.Rule, error) {
	p, err := rulePath(id)
	if err != nil {
		return nil, err
	}
	var r hitl.Rule
	if _, err := c.do(ctx, http.MethodDelete, p, nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
