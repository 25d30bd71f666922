package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/ask"
)

// waitGrace is how long past the interaction's deadline a call keeps
// waiting for the server to report the outcome, so a server that went
// away cannot make a call hang.
var waitGrace = time.Minute

// CallOptions configure Call. The zero value (or nil) is usable.
type CallOptions struct {
	// SourceAgent names the agent on the interactions it creates, shown to
	// the person (the MCP server passes the MCP client's name).
	SourceAgent string
}

// Result is the outcome of a tool call, ready to hand back to the model.
type Result struct {
	// Text is what the model reads: the answer, or what went wrong.
	Text string
	// IsError reports that the call produced no answer: the question
	// expired or was cancelled, the arguments were invalid, or the server
	// could not be reached. The model should not proceed as if answered.
	IsError bool
	// Outcome is the structured result (ask_human's output schema), set
	// once an interaction exists.
	Outcome *Outcome
	// Interaction is the interaction as it ended (a handoff: as it was
	// made); nil if none was created.
	Interaction *hitl.Interaction
	// HandoffResult is handoff_to_human's structured result, set once the
	// handoff is made.
	HandoffResult *HandoffOutcome
	// Err is the underlying error, for the caller's logs; nil on success.
	Err error
}

// Outcome is ask_human's structured result.
type Outcome struct {
	Status        hitl.Status     `json:"status"`
	Value         json.RawMessage `json:"value,omitempty"`
	RespondedBy   string          `json:"responded_by,omitempty"`
	Channel       string          `json:"channel,omitempty"`
	InteractionID string          `json:"interaction_id"`
	TimedOut      bool            `json:"timed_out,omitempty"`
	Reason        string          `json:"reason,omitempty"`
}

// Call runs a call of the named tool, with the raw JSON arguments a model
// sent, against svc: it validates the arguments, asks, waits until the
// person answers or the deadline passes, and renders the outcome for the
// model. Every failure is a Result with IsError set, never a Go error, so
// the model can read what happened. Cancelling ctx cancels the interaction
// on the server.
func Call(ctx context.Context, svc hitl.Service, name string, args json.RawMessage, opts *CallOptions) *Result {
	req, err := Request(name, args)
	if err != nil {
		return failure(name, nil, err)
	}
	if opts != nil && req.SourceAgent == "" {
		req.SourceAgent = opts.SourceAgent
	}
	if name == HandoffName {
		return callHandoff(ctx, svc, req)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Duration(req.Timeout*float64(time.Second))+waitGrace)
	defer cancel()
	in, err := ask.Ask(wctx, svc, req)
	if err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		err = hitl.Errorf(hitl.EUNAVAILABLE, "timeout waiting for feedback: the hitl server has not reported an outcome %s after the deadline; it may have stopped (start it with `hitl serve`)", waitGrace)
	}
	return Render(name, in, err)
}

// Render turns the result of asking a question for the named tool (the
// interaction as it ended, and the error from ask.Ask) into what the model
// reads.
func Render(name string, in *hitl.Interaction, err error) *Result {
	if err != nil || in == nil || in.Status != hitl.StatusAnswered || in.Result == nil {
		if err == nil {
			err = hitl.Errorf(hitl.EINTERNAL, "no answer")
			if in != nil {
				err = ask.Outcome(in)
			}
		}
		return failure(name, in, err)
	}
	r := &Result{Outcome: outcome(in), Interaction: in}
	if name == HumanFeedbackName {
		r.Text = feedbackText(in)
	} else {
		r.Text = answerText(in)
	}
	return r
}

// failure renders an error as a tool error the model can act on.
func failure(name string, in *hitl.Interaction, err error) *Result {
	r := &Result{IsError: true, Interaction: in, Err: err}
	if in != nil && in.ID != "" {
		r.Outcome = outcome(in)
	}
	msg := hitl.ErrorMessage(err)
	switch code := hitl.ErrorCode(err); {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		r.Text = "the request was cancelled before anyone answered; the question was withdrawn"
	case errors.Is(err, hitl.ErrUnreachable):
		r.Text = fmt.Sprintf("cannot reach the hitl server (%s). Start it with `hitl serve` (or point HITL_URL at a running server), then try again.", networkProblem(err))
	case code == hitl.EINVALID || code == hitl.EVALUE:
		r.Text = "invalid request: " + msg
	case code == hitl.ECONFLICT && name == HumanFeedbackName:
		r.Text = msg + "; make a fresh unique_id for a new request"
	case code == hitl.EINTERNAL:
		r.Text = "hitl could not ask the question: internal error (see the hitl server's log)"
	default:
		r.Text = msg
	}
	return r
}

// networkProblem describes a failed request without the layers above the
// HTTP client's message ("POST http://…: dial tcp …: connection refused").
func networkProblem(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "hitl client: "); i >= 0 {
		msg = msg[i+len("hitl client: "):]
	}
	return msg
}

// outcome returns the structured outcome of a terminal interaction.
func outcome(in *hitl.Interaction) *Outcome {
	o := &Outcome{Status: in.Status, InteractionID: in.ID}
	if r := in.Result; r != nil {
		o.Value = r.Value
		o.RespondedBy = r.RespondedBy
		o.Channel = r.Channel
		o.TimedOut = r.TimedOut
		o.Reason = r.Reason
	}
	if in.Status != hitl.StatusAnswered {
		o.Value = nil
	}
	return o
}

// feedbackText is human_feedback's reply: the text, or the chosen option's
// label, as the human_feedback contract's tool returns it.
func feedbackText(in *hitl.Interaction) string {
	var s string
	if err := json.Unmarshal(in.Result.Value, &s); err != nil {
		return string(in.Result.Value)
	}
	if in.Type == hitl.TypeSingleChoice {
		if o, ok := in.Option(s); ok {
			return o.Label
		}
	}
	return s
}

// answerText is ask_human's short text rendering of an answer.
func answerText(in *hitl.Interaction) string {
	r := in.Result
	var b strings.Builder
	if r.TimedOut {
		b.WriteString("No answer before the deadline; the default response applies. ")
	}
	switch in.Type {
	case hitl.TypeApproval:
		var ok bool
		_ = json.Unmarshal(r.Value, &ok)
		if ok {
			b.WriteString("Approved (value true).")
		} else {
			b.WriteString("Rejected (value false).")
		}
	case hitl.TypeSingleChoice, hitl.TypeMultiChoice:
		var keys []string
		if in.Type == hitl.TypeSingleChoice {
			var k string
			_ = json.Unmarshal(r.Value, &k)
			keys = []string{k}
		} else {
			_ = json.Unmarshal(r.Value, &keys)
		}
		labels := make([]string, len(keys))
		for i, k := range keys {
			labels[i] = k
			if o, ok := in.Option(k); ok {
				labels[i] = o.Label
			}
		}
		if len(keys) == 0 {
			b.WriteString("Chose none of the options (value []).")
		} else {
			fmt.Fprintf(&b, "Chose %s (value %s).", strings.Join(labels, ", "), compact(r.Value))
		}
	case hitl.TypeForm:
		fmt.Fprintf(&b, "Submitted the form: %s", compact(r.Value))
	case hitl.TypeAction:
		b.WriteString(actionText(in))
	default:
		var s string
		_ = json.Unmarshal(r.Value, &s)
		fmt.Fprintf(&b, "Answered: %s", s)
	}
	if r.RespondedBy != "" && !r.TimedOut {
		fmt.Fprintf(&b, "\n(answered by %s via %s)", r.RespondedBy, r.Channel)
	}
	return b.String()
}

// actionText says what the person decided about an action, and so what
// the model is to do.
func actionText(in *hitl.Interaction) string {
	var d struct {
		Decision hitl.Decision   `json:"decision"`
		Args     json.RawMessage `json:"args"`
		Message  string          `json:"message"`
	}
	_ = json.Unmarshal(in.Result.Value, &d)
	name := "the action"
	if in.Action != nil {
		name = in.Action.Name
	}
	switch d.Decision {
	case hitl.DecisionApprove:
		return fmt.Sprintf("Approved: run %s as proposed.", name)
	case hitl.DecisionEdit:
		return fmt.Sprintf("Approved with edits: run %s with these arguments instead: %s", name, compact(d.Args))
	case hitl.DecisionReject:
		if d.Message == "" {
			return fmt.Sprintf("Rejected: do not run %s.", name)
		}
		return fmt.Sprintf("Rejected: do not run %s. Reason: %s", name, d.Message)
	case hitl.DecisionRespond:
		return fmt.Sprintf("Do not run %s; the person answered instead: %s", name, d.Message)
	}
	return "Decided: " + compact(in.Result.Value)
}

// compact returns v as compact JSON.
func compact(v json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return string(v)
	}
	return buf.String()
}
