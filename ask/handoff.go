package ask

import (
	"context"
	"fmt"
	"time"

	"github.com/hitl-sh/hitl"
)

// Handoff gives the agent's conversation to a person and returns at once
// with the handoff's id: the agent stops, and the person's reply is
// collected with Reply by whatever resumes it. opts.Context carries what
// the person needs to know, opts.SessionID names the conversation (so a
// chat frontend shows the handoff in it), opts.Targets who may take it;
// the other options that shape an answer (Default, UseDefaultOnTimeout)
// are ignored. Unlike the asking helpers, ctx bounds only the create: the
// handoff stays pending after the call returns.
func Handoff(ctx context.Context, svc hitl.Service, message string, opts *Options) (string, error) {
	r := hitl.HandoffRequest{Message: message}
	if opts != nil {
		r.Context = opts.Context
		r.SessionID = opts.SessionID
		r.SourceAgent = opts.SourceAgent
		r.Timeout = opts.Timeout.Seconds()
		if !opts.Deadline.IsZero() {
			d := opts.Deadline
			r.Deadline = &d
		}
		r.Targets = opts.Targets
		r.IdempotencyKey = opts.IdempotencyKey
		r.Metadata = opts.Metadata
	}
	in, err := Create(ctx, svc, r.CreateRequest())
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("handoff: %w", err)
	}
	return in.ID, nil
}

// Reply waits for the person's reply to the handoff id and returns it. A
// handoff that ends without one is an error matching hitl.ErrExpired (the
// deadline passed) or hitl.ErrCancelled; when ctx ends first, Reply
// returns ctx's error and the handoff stays pending, for a later Reply.
func Reply(ctx context.Context, svc hitl.Service, id string) (string, error) {
	for {
		in, err := svc.Wait(ctx, id)
		switch {
		case err == nil && in != nil && in.Status.Terminal():
			return hitl.HandoffReply(in)
		case ctx.Err() != nil:
			return "", ctx.Err()
		case err != nil:
			return "", fmt.Errorf("handoff: wait for the reply to %s: %w", id, err)
		}
		// Handed back still pending: ask again after a pause.
		t := time.NewTimer(repollPause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return "", ctx.Err()
		}
	}
}
