package tools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/ask"
)

// ReviewDeferring reviews call as Review does, but waits at most after
// for the person: a call still undecided then is Deferred, its question
// left pending in hitl, so that the agent can stop now and ask again
// later (Claude Code's "defer" in -p, resumed with -p --resume) and find
// the same question, and its answer, by the call's idempotency key. A
// call without a tool_use id could not find its question again, so it is
// reviewed by Review, waiting as long as the question lasts.
func ReviewDeferring(ctx context.Context, svc hitl.Service, call ToolCall, opts *ReviewOptions, after time.Duration) *Verdict {
	if call.ToolUseID == "" && call.CallKey == "" || after <= 0 {
		return Review(ctx, svc, call, opts)
	}
	o := reviewDefaults(opts)
	req, err := call.request(o.SourceAgent, o.Timeout)
	if err != nil {
		return call.failed(nil, err)
	}
	in, err := ask.Create(ctx, svc, req)
	if err != nil {
		return call.failed(in, err)
	}
	watched, stop := hitl.WatchCredentials(ctx) // as Review does
	defer stop()
	wctx, cancel := context.WithTimeout(watched, after)
	defer cancel()
	waited := !in.Status.Terminal()
	for !in.Status.Terminal() {
		got, err := svc.Wait(wctx, in.ID)
		if got != nil && got.ID != in.ID {
			return call.failed(nil, untrusted("the hitl server answered with interaction %s, not %s", got.ID, in.ID))
		}
		if got != nil {
			in = got
		}
		switch {
		case errors.Is(context.Cause(watched), hitl.ErrCredentialsEnded):
			return call.failed(in, hitl.ErrCredentialsEnded)
		case ctx.Err() != nil:
			return call.failed(in, ctx.Err())
		case wctx.Err() != nil:
			return call.deferred(in)
		case err != nil && !in.Status.Terminal():
			return call.failed(in, err)
		}
	}
	if err := ask.Outcome(in); err != nil {
		return call.failed(in, err)
	}
	if err := call.asked(in); err != nil {
		return call.failed(nil, err)
	}
	if waited && !hitl.CredentialsHold(ctx) { // as Review checks
		return call.failed(in, hitl.ErrCredentialsEnded)
	}
	return call.decided(in)
}

// deferred is the verdict on a call whose question is still pending:
// Claude Code resumes a deferred session; any other agent is told to ask
// again.
func (c ToolCall) deferred(in *hitl.Interaction) *Verdict {
	next := "Resume the session once it is answered; the call is asked again and gets the answer."
	if c.Agent != "" {
		next = "It was not run. Still waiting in hitl: make the same call again later to pick up the answer."
	}
	return &Verdict{
		Deferred: true,
		Reason: fmt.Sprintf("Waiting for a person in hitl to decide on this %s call (question %s, open until %s). %s",
			c.Tool, in.ID, in.Deadline.UTC().Format(time.RFC3339), next),
		Interaction: in,
	}
}

// InputKey identifies a call within its session by its tool and a
// SHA-256 of its input (compacted), for ToolCall.CallKey.
func InputKey(tool string, input json.RawMessage) string {
	var compact bytes.Buffer
	if json.Compact(&compact, input) != nil {
		compact.Write(input)
	}
	sum := sha256.Sum256(compact.Bytes())
	return tool + ":sha256:" + hex.EncodeToString(sum[:])
}
