package client

import (
	"context"

	"github.com/hitl-sh/hitl"
)

// Handoff gives the agent's conversation to a person and returns at once
// with the handoff's id; the person's reply is the handoff's answer,
// which whoever resumes the agent collects with WaitReply (or Wait).
func (c *Client) Handoff(ctx context.Context, req hitl.HandoffRequest) (string, error) {
	in, _, err := c.Create(ctx, req.CreateRequest())
	if err != nil {
		return "", err
	}
	return in.ID, nil
}

// WaitReply waits for the person's reply to the handoff id (see Wait: it
// long-polls and rides out a server restart) and returns it. A handoff
// that ends without a reply is an error matching hitl.ErrExpired or
// hitl.ErrCancelled; ctx ending first is ctx's error, and leaves the
// handoff pending.
func (c *Client) WaitReply(ctx context.Context, id string) (string, error) {
	in, err := c.Wait(ctx, id)
	if err != nil {
		return "", err
	}
	return hitl.HandoffReply(in)
}
