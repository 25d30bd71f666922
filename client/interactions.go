package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/hitl-sh/hitl"
)

// interactionsPath is the native API's collection.
const interactionsPath = "/api/v1/interactions"

// interactionPath returns the path of one interaction, plus an optional
// action ("wait", "respond", "cancel").
func interactionPath(id, action string) (string, error) {
	if id == "" {
		return "", hitl.Errorf(hitl.EINVALID, "interaction id is required")
	}
	p := interactionsPath + "/" + url.PathEscape(id)
	if action != "" {
		p += "/" + action
	}
	return p, nil
}

// Create asks a question (POST /api/v1/interactions). created is false when
// the server returned an existing interaction for an idempotent repeat (the
// same idempotency key and question).
func (c *Client) Create(ctx context.Context, req hitl.CreateRequest) (*hitl.Interaction, bool, error) {
	var in hitl.Interaction
	status, err := c.do(ctx, http.MethodPost, interactionsPath, req, &in)
	if err != nil {
		return nil, false, err
	}
	return &in, status == http.StatusCreated, nil
}

// Get returns one interaction (GET /api/v1/interactions/{id}).
func (c *Client) Get(ctx context.Context, id string) (*hitl.Interaction, error) {
	p, err := interactionPath(id, "")
	if err != nil {
		return nil, err
	}
	var in hitl.Interaction
	if _, err := c.do(ctx, http.MethodGet, p, nil, &in); err != nil {
		return nil, err
	}
	return &in, nil
}

// listResponse is a page of GET /api/v1/interactions.
type listResponse struct {
	Interactions []*hitl.Interaction `json:"interactions"`
	NextCursor   *string             `json:"next_cursor"`
}

// List returns a page of interactions, newest first, and the cursor of the
// next page ("" when there is none). The server filters by Status,
// IdempotencyKey, Limit and Cursor; CreatedBy is not part of the HTTP API
// and must be empty.
func (c *Client) List(ctx context.Context, f hitl.ListFilter) ([]*hitl.Interaction, string, error) {
	if f.CreatedBy != "" {
		return nil, "", hitl.Errorf(hitl.EINVALID, "the HTTP API cannot filter by created_by")
	}
	q := url.Values{}
	if f.Status != "" {
		q.Set("status", string(f.Status))
	}
	if f.Limit != 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	if f.Cursor != "" {
		q.Set("cursor", f.Cursor)
	}
	if f.IdempotencyKey != "" {
		q.Set("idempotency_key", f.IdempotencyKey)
	}
	p := interactionsPath
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	var resp listResponse
	if _, err := c.do(ctx, http.MethodGet, p, nil, &resp); err != nil {
		return nil, "", err
	}
	next := ""
	if resp.NextCursor != nil {
		next = *resp.NextCursor
	}
	return resp.Interactions, next, nil
}

// respondRequest is the body of POST .../respond.
type respondRequest struct {
	Value   json.RawMessage `json:"value"`
	Channel string          `json:"channel,omitempty"`
}

// Respond answers a pending interaction (POST .../respond) with value, sent
// on the client's channel. The server validates and normalises the value
// (a label for a key, "yes" for true, …) and returns the interaction with
// the canonical answer. A second answer fails with hitl.ErrConflict, an
// answer after the deadline with hitl.ErrExpired, one to a cancelled
// interaction with hitl.ErrCancelled, and an invalid value with
// hitl.ErrValue.
func (c *Client) Respond(ctx context.Context, id string, value json.RawMessage) (*hitl.Interaction, error) {
	p, err := interactionPath(id, "respond")
	if err != nil {
		return nil, err
	}
	if len(value) == 0 {
		value = json.RawMessage("null") // let the server say a value is required
	}
	var in hitl.Interaction
	body := respondRequest{Value: value, Channel: c.channel}
	if c.channel == hitl.ChannelMCP {
		body.Channel = "" // the server takes mcp from the header only
	}
	if _, err := c.do(ctx, http.MethodPost, p, body, &in); err != nil {
		return nil, err
	}
	return &in, nil
}

// cancelRequest is the body of POST .../cancel.
type cancelRequest struct {
	Reason string `json:"reason,omitempty"`
}

// Cancel withdraws a pending interaction (POST .../cancel); "" means the
// server's default reason, agent_cancelled. Cancelling a cancelled
// interaction returns it unchanged; cancelling an answered or expired one
// fails with hitl.ErrConflict or hitl.ErrExpired.
func (c *Client) Cancel(ctx context.Context, id string, reason string) (*hitl.Interaction, error) {
	p, err := interactionPath(id, "cancel")
	if err != nil {
		return nil, err
	}
	var in hitl.Interaction
	if _, err := c.do(ctx, http.MethodPost, p, cancelRequest{Reason: reason}, &in); err != nil {
		return nil, err
	}
	return &in, nil
}
