// Package ask asks a person a question through any hitl.Service — the
// in-process engine (broker) or a remote server (client) — and waits for a
// typed answer:
//
//	ok, err := ask.YesNo(ctx, svc, "Deploy build 1432 to production?", "Deploy", "Hold", nil)
//	env, _, err := ask.Choice(ctx, svc, "Which environment?", []string{"Staging", "Production"}, nil)
//	rel, err := ask.Form[Release](ctx, svc, "Release details?", nil)
//
// Every call blocks until the person answers or the deadline passes.
// Cancelling ctx cancels the interaction on the server, so the question
// leaves the person's inbox. An interaction that ends without an answer is
// an error the caller can test: errors.Is(err, hitl.ErrExpired) when the
// deadline passed, errors.Is(err, hitl.ErrCancelled) when it was withdrawn.
// Requests the server refuses come back as hitl.ErrInvalid (a malformed
// question) or hitl.ErrConflict (an idempotency key reused for another
// question).
//
// Code written for the human_feedback contract's orchestrator helpers
// (RequestHumanFeedback, RequestYesNoFeedback,
// RequestMultipleChoiceFeedback) runs unchanged on an Orchestrator, which
// has them with their parameters and results.
package ask

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/hitl-sh/hitl"
)

// CancelReason is the reason given to the server when the caller's context
// ends before an answer arrives.
const CancelReason = hitl.CancelledByAgent

// cancelTimeout bounds the request that cancels an interaction once the
// caller's context has ended.
const cancelTimeout = 5 * time.Second

// repollPause is how long Ask waits before asking again when a Service's
// Wait hands an interaction back still pending without an error.
var repollPause = time.Second

// Ask creates an interaction and waits until it ends. It returns the
// terminal interaction and:
//   - nil when it was answered (also when the default response was used at
//     the deadline: Result.TimedOut tells);
//   - an error matching hitl.ErrExpired when the deadline passed unanswered
//     ("timeout waiting for feedback: …");
//   - an error matching hitl.ErrCancelled when it was cancelled;
//   - ctx's error when ctx ended first, after cancelling the interaction on
//     the server (reason "agent_cancelled", with a fresh context of a few
//     seconds so the request can still be sent); the interaction returned is
//     the cancelled one, or the answered one if an answer won the race.
//     That holds during the create too (see Create).
//
// Waiting is the Service's: the HTTP client long-polls and rides out a
// server restart; the engine wakes the waiter the moment the answer lands.
func Ask(ctx context.Context, svc hitl.Service, req hitl.CreateRequest) (*hitl.Interaction, error) {
	in, _, err := AskWaited(ctx, svc, req)
	return in, err
}

// AskWaited is Ask, and reports whether it waited for the outcome: false
// when the interaction ended as it was asked (a rule decided it, or its
// idempotency key is an ended question's) or was not made, so that
// nothing happened between the request and what it returns.
func AskWaited(ctx context.Context, svc hitl.Service, req hitl.CreateRequest) (in *hitl.Interaction, waited bool, err error) {
	in, err = Create(ctx, svc, req)
	if err != nil {
		if ctx.Err() != nil {
			return in, false, ctx.Err()
		}
		return nil, false, fmt.Errorf("ask: create interaction: %w", err)
	}
	if in.Status.Terminal() {
		return in, false, Outcome(in)
	}
	in, err = await(ctx, svc, in)
	return in, true, err
}

// await waits until in, made and still pending, ends.
func await(ctx context.Context, svc hitl.Service, in *hitl.Interaction) (*hitl.Interaction, error) {
	for {
		got, err := svc.Wait(ctx, in.ID)
		if got != nil && got.ID != in.ID {
			return in, fmt.Errorf("ask: wait for interaction %s: %w", in.ID, &OtherInteractionError{Asked: in.ID, Got: got.ID})
		}
		if got != nil {
			in = got
		}
		switch {
		case err == nil && in.Status.Terminal():
			return in, Outcome(in)
		case ctx.Err() != nil:
			return cancelDetached(ctx, svc, in), ctx.Err()
		case err != nil:
			return in, fmt.Errorf("ask: wait for interaction %s: %w", in.ID, err)
		}
		// Handed back still pending: ask again after a pause.
		t := time.NewTimer(repollPause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return cancelDetached(ctx, svc, in), ctx.Err()
		}
	}
}

// OtherInteractionError is Ask's error when the Service's Wait hands back
// another interaction than the one asked: what it holds is not the
// question's outcome, and must not be acted on.
type OtherInteractionError struct {
	Asked, Got string // the interactions' ids
}

func (e *OtherInteractionError) Error() string {
	return fmt.Sprintf("the service answered with interaction %s, not %s", e.Got, e.Asked)
}

// Outcome returns nil for an answered interaction, and for one that ended
// otherwise an application error saying why: code hitl.EEXPIRED ("timeout
// waiting for feedback") or hitl.ECANCELLED. A pending interaction has no
// outcome yet, which is an error too.
func Outcome(in *hitl.Interaction) error {
	reason := ""
	if in.Result != nil {
		reason = in.Result.Reason
	}
	switch in.Status {
	case hitl.StatusAnswered:
		return nil
	case hitl.StatusExpired:
		return hitl.Errorf(hitl.EEXPIRED, "timeout waiting for feedback: nobody answered interaction %s before its deadline (%s)", in.ID, in.Deadline.Format(time.RFC3339))
	case hitl.StatusCancelled:
		if reason == "" {
			reason = "no reason given"
		}
		return hitl.Errorf(hitl.ECANCELLED, "interaction %s was cancelled: %s", in.ID, reason)
	}
	return hitl.Errorf(hitl.ECONFLICT, "interaction %s is still %s", in.ID, in.Status)
}

// cancelDetached cancels in on the server with a fresh short-lived context
// that keeps ctx's values (the caller's identity) but not its
// cancellation, and returns the interaction as it ends up.
func cancelDetached(ctx context.Context, svc hitl.Service, in *hitl.Interaction) *hitl.Interaction {
	if in.Status.Terminal() {
		return in
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer cancel()
	out, err := svc.Cancel(cctx, in.ID, CancelReason)
	switch {
	case err == nil:
		return out
	case errors.Is(err, hitl.ErrConflict) || errors.Is(err, hitl.ErrExpired):
		// It ended first; report how, if the server says.
		if got, gerr := svc.Get(cctx, in.ID); gerr == nil {
			return got
		}
	}
	return in
}

// Create asks req through svc without waiting for the answer, and leaves
// nothing behind when ctx ends during the create. A request without an
// idempotency key is given a random one, so that if ctx ends then — the
// server may have stored the question before its reply was cut off —
// Create sends the request again with a fresh context of a few seconds,
// gets that interaction (or creates it) and cancels it: no question is
// left pending with nobody waiting. It then returns the interaction as it
// ended up (nil when the server could not be reached) with ctx's error.
// A ctx that has already ended asks nothing. Other errors are svc's.
func Create(ctx context.Context, svc hitl.Service, req hitl.CreateRequest) (*hitl.Interaction, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req.IdempotencyKey == "" {
		req.IdempotencyKey = "ask-" + uuid.NewString()
	}
	in, _, err := svc.Create(ctx, req)
	switch {
	case err == nil:
		return in, nil
	case ctx.Err() != nil:
		return cancelUnheard(ctx, svc, req), ctx.Err()
	}
	return nil, err
}

// cancelUnheard cancels the interaction of a create whose reply was cut
// off when ctx ended: req, which has an idempotency key, is sent again with
// a fresh short-lived context, which returns the interaction the first
// request made (or makes it), and that is cancelled. It returns the
// interaction as it ends up, or nil when the server could not be reached.
func cancelUnheard(ctx context.Context, svc hitl.Service, req hitl.CreateRequest) *hitl.Interaction {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer cancel()
	in, _, err := svc.Create(cctx, req)
	if err != nil {
		return nil
	}
	return cancelDetached(ctx, svc, in)
}
