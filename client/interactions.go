package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/google/uuid"
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

// List returns a page of interactions in f's order (newest first by
// default), and the cursor of the next page ("" when there is none). The
// server filters by every field of f but CreatedBy, which is not part of
// the HTTP API and must be empty.
func (c *Client) List(ctx context.Context, f hitl.ListFilter) ([]*hitl.Interaction, string, error) {
	q, err := listQuery(f)
	if err != nil {
		return nil, "", err
	}
	var resp listResponse
	if _, err := c.do(ctx, http.MethodGet, withQuery(interactionsPath, q), nil, &resp); err != nil {
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

// respondAttempts bounds how many times Respond sends one answer.
const respondAttempts = 4

// Respond answers a pending interaction (POST .../respond) with value, sent
// on the client's channel. The server validates and normalises the value
// (a label for a key, "yes" for true, …) and returns the interaction with
// the canonical answer. A second answer fails with hitl.ErrConflict, an
// answer after the deadline with hitl.ErrExpired, one to a cancelled
// interaction with hitl.ErrCancelled, and an invalid value with
// hitl.ErrValue.
//
// Each call sends a new random Idempotency-Key, and when the reply does not
// arrive (a network error, or a 502, 503 or 504) it sends the answer
// again with the same key, up to 4 times in all with backoff: an answer
// the server recorded before the connection dropped comes back as the
// success it was, not as "already answered" (see RespondIdempotent).
func (c *Client) Respond(ctx context.Context, id string, value json.RawMessage) (*hitl.Interaction, error) {
	return c.RespondIdempotent(ctx, id, value, uuid.NewString())
}

// RespondIdempotent is Respond with the caller's own idempotency key, for
// an answer that may be sent again later, by a new process too: the
// server stores the key with the answer, and the same answer sent by the
// same caller with the same key gets the original success, however often
// and long after it is repeated. Another answer, or another key, gets
// hitl.ErrConflict. With key "", no key is sent and a lost reply is not
// retried.
func (c *Client) RespondIdempotent(ctx context.Context, id string, value json.RawMessage, key string) (*hitl.Interaction, error) {
	p, err := interactionPath(id, "respond")
	if err != nil {
		return nil, err
	}
	if len(value) == 0 {
		value = json.RawMessage("null") // let the server say a value is required
	}
	body := respondRequest{Value: value, Channel: c.channel}
	if c.channel == hitl.ChannelMCP {
		body.Channel = "" // the server takes mcp from the header only
	}
	for attempt := 0; ; attempt++ {
		var in hitl.Interaction
		status, err := c.doKey(ctx, http.MethodPost, p, body, &in, key)
		if err == nil {
			return &in, nil
		}
		if key == "" || attempt+1 >= respondAttempts || !retryable(status, err) || ctx.Err() != nil {
			return nil, err
		}
		c.log.Warn("answer not confirmed; sending it again with its idempotency key", "interaction_id", id, "status", status, "error", err)
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return nil, err
		}
	}
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
