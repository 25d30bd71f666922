package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hitl-sh/hitl"
	"github.com/slack-go/slack"
)

// actionSubmission answers the action in with a submitted modal (key: the
// button that opened it) as the Slack user. It returns the response that
// keeps the modal open with errors, or nil to close it.
func (s *Service) actionSubmission(ctx context.Context, api *slack.Client, cfg Config, user string, in *hitl.Interaction, key string, state *slack.ViewState) *slack.ViewSubmissionResponse {
	value, errs, block := actionAnswer(in, key, state)
	if len(errs) > 0 {
		return slack.NewErrorsViewSubmissionResponse(errs)
	}
	if err := s.respond(ctx, api, cfg, user, in.ID, value); err != nil {
		return slack.NewErrorsViewSubmissionResponse(map[string]string{block: truncate(s.explainPlain(in.ID, err), 300)})
	}
	return nil
}

// alwaysJSON is the "always" of an answer that makes a rule.
type alwaysJSON struct {
	Match        *hitl.RuleMatch `json:"match"`
	TTLSeconds   int             `json:"ttl_seconds,omitempty"`
	ConfirmRisky bool            `json:"confirm_risky,omitempty"`
}

// actionAnswer reads the answer a submitted action modal gives, or the
// errors to show by block; block is where to show the engine's refusal.
func actionAnswer(in *hitl.Interaction, key string, state *slack.ViewState) (json.RawMessage, map[string]string, string) {
	text := func(block string) string {
		a, _ := stateValue(state, block)
		return strings.TrimSpace(a.Value)
	}
	var v any
	block := blockMessage
	switch key {
	case string(hitl.DecisionReject), string(hitl.DecisionRespond):
		v = struct {
			Decision string `json:"decision"`
			Message  string `json:"message,omitempty"`
		}{key, text(blockMessage)}
	case string(hitl.DecisionEdit):
		args, errs, b := editedArgs(in, state)
		if len(errs) > 0 {
			return nil, errs, b
		}
		block = b
		v = struct {
			Decision string          `json:"decision"`
			Args     json.RawMessage `json:"args"`
		}{key, args}
	case keyAlways:
		always, errs, b := alwaysAnswer(in, state)
		if len(errs) > 0 {
			return nil, errs, b
		}
		block = b
		v = struct {
			Decision hitl.Decision `json:"decision"`
			Always   *alwaysJSON   `json:"always"`
		}{hitl.DecisionApprove, always}
	default:
		return nil, map[string]string{blockMessage: "This form is out of date; open it again."}, blockMessage
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, map[string]string{block: "This answer cannot be sent"}, block
	}
	return raw, nil, block
}

// editedArgs reads the Edit modal: the arguments as JSON, or the proposed
// arguments with each field's input in place of its value (an emptied
// input removes the argument; an unticked box adds no false). It returns
// the errors to show by block, and the block for the engine's refusal.
func editedArgs(in *hitl.Interaction, state *slack.ViewState) (json.RawMessage, map[string]string, string) {
	ev, ok := editForm(in)
	if !ok {
		return nil, map[string]string{blockArgs: "Edit this action in the web inbox."}, blockArgs
	}
	if ev.fields == nil {
		a, _ := stateValue(state, blockArgs)
		raw := strings.TrimSpace(a.Value)
		if problem := jsonObjectProblem(raw); problem != "" {
			return nil, map[string]string{blockArgs: problem}, blockArgs
		}
		return json.RawMessage(raw), nil, blockArgs
	}
	got, errs := readFields(ev.fields, state)
	if len(errs) > 0 {
		return nil, errs, blockID(0)
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal(in.Action.Args, &args); err != nil || args == nil {
		args = map[string]json.RawMessage{}
	}
	for _, f := range ev.fields {
		v, set := got[f.name]
		old, had := args[f.name]
		switch {
		case set && f.kind == fieldBool && !had && string(v) == "false":
		case set:
			args[f.name] = v
		case had && (string(old) == `""` || string(old) == "null"):
		default:
			delete(args, f.name)
		}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, map[string]string{blockID(0): "These arguments cannot be sent"}, blockID(0)
	}
	return raw, nil, blockID(0)
}

// jsonObjectProblem says what keeps text from being one JSON object,
// and where; "" when it is one.
func jsonObjectProblem(text string) string {
	var v any
	err := json.Unmarshal([]byte(text), &v)
	var syn *json.SyntaxError
	switch {
	case text == "":
		return "Enter the arguments, a JSON object"
	case errors.As(err, &syn):
		return fmt.Sprintf("Not valid JSON at character %d: %s", syn.Offset, strings.TrimPrefix(err.Error(), "json: "))
	case err != nil:
		return "Not valid JSON: " + strings.TrimPrefix(err.Error(), "json: ")
	}
	if _, ok := v.(map[string]any); !ok {
		return `The arguments must be a JSON object: {"name": value, …}`
	}
	return ""
}

// alwaysAnswer reads the Always allow modal: the rule's match (checked,
// and checked to match this call) and expiry. It returns the errors to
// show by block, and the block for the engine's refusal.
func alwaysAnswer(in *hitl.Interaction, state *slack.ViewState) (*alwaysJSON, map[string]string, string) {
	scopes, _ := ruleScopes(in)
	chosen, _ := stateValue(state, blockScope)
	var sc *scope
	for i := range scopes {
		if scopes[i].value == chosen.SelectedOption.Value {
			sc = &scopes[i]
		}
	}
	if sc == nil {
		return nil, map[string]string{blockScope: "Choose what the rule allows"}, blockScope
	}
	out := &alwaysJSON{Match: sc.match}
	block := blockScope
	if sc.value == scopePattern {
		block = blockPattern
		p := func() string { a, _ := stateValue(state, blockPattern); return strings.TrimSpace(a.Value) }()
		if p == "" {
			return nil, map[string]string{blockPattern: "Enter a pattern, or choose another scope"}, block
		}
		out.Match = sc.withPattern(p)
		// The engine checks the rule; this checks that it covers the call
		// being approved, so the person approves what they see.
		r, err := hitl.NewRule(hitl.RuleRequest{Effect: hitl.RuleAllow, SourceAgent: in.SourceAgent, ActionName: in.Action.Name, Match: out.Match}, hitl.Caller{}, in.CreatedAt)
		if err != nil {
			return nil, map[string]string{blockPattern: truncate(hitl.ErrorMessage(err), 300)}, block
		}
		if !r.Match.Matches(in.Action.Args) {
			return nil, map[string]string{blockPattern: "This pattern does not match this call; the rule must cover what you approve"}, block
		}
	}
	exp, _ := stateValue(state, blockExpiry)
	if n, err := strconv.Atoi(exp.SelectedOption.Value); err == nil && n > 0 {
		out.TTLSeconds = n
	}
	if in.Action.Risky() {
		box, _ := stateValue(state, blockConfirmRisky)
		if len(box.SelectedOptions) != 1 || box.SelectedOptions[0].Value != confirmRiskyValue {
			return nil, map[string]string{blockConfirmRisky: "Tick the box to confirm: this call is marked risky"}, blockConfirmRisky
		}
		out.ConfirmRisky = true
	}
	return out, nil, block
}
