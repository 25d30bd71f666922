package client

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/hitl-sh/hitl"
)

// Backoff bounds for Wait's retries after a failed or cut-short long-poll.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// Wait blocks until the interaction is terminal and returns it, long-polling
// GET /api/v1/interactions/{id}/wait and polling again whenever the server
// hands the interaction back still pending.
//
// Wait rides out a server restart: on a network error or a 502, 503 or 504
// it retries with capped exponential backoff and jitter (100 ms growing to
// 5 s) until the server answers again or ctx ends. Any other failure, such
// as hitl.ErrNotFound, is returned at once.
//
// An expired or cancelled interaction is returned with a nil error: the
// caller reads its Status and Result. When ctx ends first, Wait returns the
// interaction as last seen (nil if never seen) and ctx's error.
func (c *Client) Wait(ctx context.Context, id string) (*hitl.Interaction, error) {
	p, err := interactionPath(id, "wait")
	if err != nil {
		return nil, err
	}
	p += "?timeout=" + strconv.FormatFloat(c.poll.Seconds(), 'f', -1, 64)
	var (
		last    *hitl.Interaction
		attempt int  // consecutive polls that failed or came back early
		failing bool // the last poll failed
	)
	for {
		start := time.Now()
		var in hitl.Interaction
		status, err := c.do(ctx, http.MethodGet, p, nil, &in)
		if err == nil && in.Status.Terminal() {
			return &in, nil
		}
		if ctx.Err() != nil {
			return last, ctx.Err()
		}
		switch {
		case err == nil:
			last, failing = &in, false
			if time.Since(start) >= c.poll/2 {
				// A full long-poll with no news: ask again at once.
				attempt = 0
				continue
			}
			// Handed back early, as a server does when it shuts down:
			// back off so a restarting server is not hammered.
			c.log.Debug("wait returned early; polling again", "interaction_id", id)
		case retryable(status, err):
			level := slog.LevelWarn
			if failing {
				level = slog.LevelDebug // once per outage is enough
			}
			failing = true
			c.log.Log(ctx, level, "wait failed; retrying", "interaction_id", id, "status", status, "error", err)
		default:
			return last, err
		}
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return last, err
		}
		attempt++
	}
}

// retryable reports whether a failed request may succeed when repeated:
// no response at all (the server is down or restarting), or a gateway or
// availability error.
func retryable(status int, err error) bool {
	var te *transportError
	if errors.As(err, &te) {
		return true
	}
	switch status {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// backoff returns the pause before retry number attempt (from 0): doubling
// from minBackoff, capped at maxBackoff, with "equal jitter" (between half
// and all of it) so that many agents do not retry in step.
func backoff(attempt int) time.Duration {
	d := maxBackoff
	if attempt < 16 {
		d = min(minBackoff<<attempt, maxBackoff)
	}
	return d/2 + rand.N(d/2+1)
}

// sleep waits for d or until ctx ends, whichever comes first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
