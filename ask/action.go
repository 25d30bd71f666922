package ask

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hitl-sh/hitl"
)

// Decision is what a person decided about an action (a tool call): Kind
// approve or edit means run it with Args (the proposed arguments, or the
// edited ones); reject means do not run it (Message, when given, says
// why); respond means do not run it, and Message is the person's reply
// instead. It encodes as the answer it is, so it can be an Options.Default.
type Decision struct {
	Kind    hitl.Decision   `json:"decision"`
	Args    json.RawMessage `json:"args,omitempty"`
	Message string          `json:"message,omitempty"`
}

// Run reports whether the action is to run: approved or edited.
func (d Decision) Run() bool {
	return d.Kind == hitl.DecisionApprove || d.Kind == hitl.DecisionEdit
}

// DecisionOf is Decision with the arguments as a T.
type DecisionOf[T any] struct {
	Kind    hitl.Decision `json:"decision"`
	Args    T             `json:"args"`
	Message string        `json:"message,omitempty"`
}

// Run reports whether the action is to run: approved or edited.
func (d DecisionOf[T]) Run() bool {
	return d.Kind == hitl.DecisionApprove || d.Kind == hitl.DecisionEdit
}

// ActionOptions add detail to an action review. Options.Default, when
// set, is a Decision (or a DecisionOf).
type ActionOptions struct {
	Options
	// Question is what the person reads first; "" means "Run <name>?".
	Question string
	// Description says what the call is for.
	Description string
	// ArgsSchema is the JSON Schema an edit must meet (ActionOf sends T's
	// when it is nil).
	ArgsSchema json.RawMessage
	// Decisions are those the person may make; nil means all four.
	Decisions []hitl.Decision
	// RejectRequiresMessage makes a reason required to reject.
	RejectRequiresMessage bool
}

// request returns the create request for the action name with args.
func (o *ActionOptions) request(name string, args json.RawMessage) (hitl.CreateRequest, error) {
	var opts *Options
	if o != nil {
		opts = &o.Options
	}
	req, err := opts.request(hitl.TypeAction, "")
	if err != nil {
		return req, err
	}
	req.Action = &hitl.Action{Name: name, Args: args}
	if o != nil {
		req.Question, req.Action.Description = o.Question, o.Description
		req.ArgsSchema, req.Decisions, req.RejectRequiresMessage = o.ArgsSchema, o.Decisions, o.RejectRequiresMessage
	}
	return req, nil
}

// Action asks a person to review a call of the tool name with args (any
// value that encodes as a JSON object, or a json.RawMessage holding one)
// and returns their decision. A reject or a respond is a decision, not an
// error: check Kind (or Run) before running the tool. A rule may decide at
// once, without a person. Errors are as for Ask: hitl.ErrExpired at the
// deadline, hitl.ErrCancelled, ctx's error (which withdraws the review).
func Action(ctx context.Context, svc hitl.Service, name string, args any, opts *ActionOptions) (Decision, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return Decision{}, hitl.Errorf(hitl.EINVALID, "action args: %v", err)
	}
	req, err := opts.request(name, raw)
	if err != nil {
		return Decision{}, err
	}
	in, err := Ask(ctx, svc, req)
	if err != nil {
		return Decision{}, err
	}
	return decisionOf(in)
}

// decisionOf reads the decision an answered action holds.
func decisionOf(in *hitl.Interaction) (Decision, error) {
	var d Decision
	if in.Result == nil || json.Unmarshal(in.Result.Value, &d) != nil || !d.Kind.Valid() {
		return Decision{}, fmt.Errorf("ask: interaction %s is not an answered action", in.ID)
	}
	if d.Kind == hitl.DecisionApprove && in.Action != nil {
		d.Args = in.Action.Args
	}
	return d, nil
}

// ActionOf is Action with typed arguments: args is sent as the proposal,
// T's JSON Schema (see Schema) as the args_schema an edit must meet
// unless opts gives one, and the arguments come back as a T: args itself
// on approve, the person's on edit, the zero T on reject and respond.
func ActionOf[T any](ctx context.Context, svc hitl.Service, name string, args T, opts *ActionOptions) (DecisionOf[T], error) {
	var out DecisionOf[T]
	o := ActionOptions{}
	if opts != nil {
		o = *opts
	}
	if o.ArgsSchema == nil {
		schema, err := Schema[T]()
		if err != nil {
			return out, err
		}
		o.ArgsSchema = schema
	}
	d, err := Action(ctx, svc, name, args, &o)
	if err != nil {
		return out, err
	}
	out.Kind, out.Message = d.Kind, d.Message
	switch d.Kind {
	case hitl.DecisionApprove:
		out.Args = args
	case hitl.DecisionEdit:
		if err := json.Unmarshal(d.Args, &out.Args); err != nil {
			return out, fmt.Errorf("ask: decode the edited arguments as %T: %w", out.Args, err)
		}
	}
	return out, nil
}
