package ask

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hitl-sh/hitl"
)

// Options add detail to a question. A nil *Options asks with the server's
// defaults (no context, a one-hour deadline).
type Options struct {
	// Context is supporting text shown with the question (Markdown).
	Context string
	// Timeout is how long the person has to answer; 0 means the server's
	// default (one hour). Deadline, when set, wins.
	Timeout time.Duration
	// Deadline is an absolute deadline.
	Deadline time.Time
	// Default pre-fills the answer in the person's form, in the helper's
	// type: a string for Text, a bool for YesNo, a choice's label or key
	// for Choice, a list of them for Choices, a T for Form. With
	// UseDefaultOnTimeout it is also the answer when the deadline passes.
	Default any
	// UseDefaultOnTimeout answers with Default at the deadline instead of
	// failing with hitl.ErrExpired.
	UseDefaultOnTimeout bool
	// IdempotencyKey makes retries safe: asking again with the same key
	// and question waits on the same interaction (and gets its answer if
	// it already has one); the same key with another question is
	// hitl.ErrConflict. Empty means a new random key for this call (see
	// Ask).
	IdempotencyKey string
	// SourceAgent names the agent asking, shown to the person.
	SourceAgent string
	// SessionID groups questions from one agent session.
	SessionID string
	// Metadata is free-form provenance stored with the interaction.
	Metadata map[string]any
	// Targets restricts who may answer; nil means anyone.
	Targets *hitl.Targets
}

// request returns the create request for a question of type t.
func (o *Options) request(t hitl.Type, question string) (hitl.CreateRequest, error) {
	req := hitl.CreateRequest{Type: t, Question: question}
	if o == nil {
		return req, nil
	}
	req.Context = o.Context
	req.Timeout = o.Timeout.Seconds()
	if !o.Deadline.IsZero() {
		d := o.Deadline
		req.Deadline = &d
	}
	if o.Default != nil {
		b, err := json.Marshal(o.Default)
		if err != nil {
			return req, hitl.Errorf(hitl.EINVALID, "default response: %v", err)
		}
		req.DefaultResponse = b
	}
	if o.UseDefaultOnTimeout {
		req.OnTimeout = hitl.OnTimeoutDefault
	}
	req.IdempotencyKey = o.IdempotencyKey
	req.SourceAgent = o.SourceAgent
	req.SessionID = o.SessionID
	req.Metadata = o.Metadata
	req.Targets = o.Targets
	return req, nil
}

// askValue asks req and decodes the answer into v.
func askValue(ctx context.Context, svc hitl.Service, req hitl.CreateRequest, v any) (*hitl.Interaction, error) {
	in, err := Ask(ctx, svc, req)
	if err != nil {
		return in, err
	}
	if in.Result == nil {
		return in, fmt.Errorf("ask: interaction %s is answered but has no result", in.ID)
	}
	if err := json.Unmarshal(in.Result.Value, v); err != nil {
		return in, fmt.Errorf("ask: decode the answer to interaction %s as %T: %w", in.ID, v, err)
	}
	return in, nil
}

// Text asks a free-text question, such as a one-time code, and returns the
// person's text.
func Text(ctx context.Context, svc hitl.Service, question string, opts *Options) (string, error) {
	req, err := opts.request(hitl.TypeFreeText, question)
	if err != nil {
		return "", err
	}
	var s string
	_, err = askValue(ctx, svc, req, &s)
	return s, err
}

// YesNo asks for an approval and reports whether the person approved. The
// two buttons read yesLabel and noLabel ("" for "Approve" and "Reject").
func YesNo(ctx context.Context, svc hitl.Service, question, yesLabel, noLabel string, opts *Options) (bool, error) {
	req, err := opts.request(hitl.TypeApproval, question)
	if err != nil {
		return false, err
	}
	if yesLabel != "" || noLabel != "" {
		if yesLabel == "" {
			yesLabel = "Approve"
		}
		if noLabel == "" {
			noLabel = "Reject"
		}
		req.Options = hitl.OptionList{{Key: "approve", Label: yesLabel}, {Key: "reject", Label: noLabel}}
	}
	var ok bool
	_, err = askValue(ctx, svc, req, &ok)
	return ok, err
}

// Choice asks the person to pick one of choices (labels; each option's key
// is derived from its label with hitl.DeriveKey) and returns the chosen
// key and its index in choices.
func Choice(ctx context.Context, svc hitl.Service, question string, choices []string, opts *Options) (key string, index int, err error) {
	req, err := opts.request(hitl.TypeSingleChoice, question)
	if err != nil {
		return "", -1, err
	}
	req.Options = labels(choices)
	in, err := askValue(ctx, svc, req, &key)
	if err != nil {
		return "", -1, err
	}
	index, err = indexOf(in, key)
	if err != nil {
		return "", -1, err
	}
	return key, index, nil
}

// Choices asks the person to pick any number of choices (labels, as for
// Choice) and returns the chosen keys and their indexes in choices, in the
// order the person gave them.
func Choices(ctx context.Context, svc hitl.Service, question string, choices []string, opts *Options) (keys []string, indexes []int, err error) {
	req, err := opts.request(hitl.TypeMultiChoice, question)
	if err != nil {
		return nil, nil, err
	}
	req.Options = labels(choices)
	in, err := askValue(ctx, svc, req, &keys)
	if err != nil {
		return nil, nil, err
	}
	indexes = make([]int, len(keys))
	for i, k := range keys {
		if indexes[i], err = indexOf(in, k); err != nil {
			return nil, nil, err
		}
	}
	return keys, indexes, nil
}

// labels turns choice labels into options with derived keys.
func labels(choices []string) hitl.OptionList {
	opts := make(hitl.OptionList, len(choices))
	for i, c := range choices {
		opts[i] = hitl.Option{Key: hitl.DeriveKey(c), Label: c}
	}
	return opts
}

// indexOf returns the position of the option with key in the interaction,
// which keeps the order the choices were given in.
func indexOf(in *hitl.Interaction, key string) (int, error) {
	for i, o := range in.Options {
		if o.Key == key {
			return i, nil
		}
	}
	return -1, fmt.Errorf("ask: interaction %s was answered with %q, which is not one of its options", in.ID, key)
}
