package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
)

// HumanFeedbackArgs are the arguments of a human_feedback call.
type HumanFeedbackArgs struct {
	MessageForUser string   `json:"message_for_user"`
	UniqueID       string   `json:"unique_id"`
	Options        []string `json:"options,omitempty"`
	TimeoutSeconds Seconds  `json:"timeout_seconds,omitempty"`
}

// Request validates the arguments and returns the question they ask: a
// single_choice over the options' labels when there are options, free
// text otherwise, with unique_id as the idempotency key. Errors have code
// hitl.EINVALID and a message for the model.
func (a HumanFeedbackArgs) Request() (hitl.CreateRequest, error) {
	req := hitl.CreateRequest{Type: hitl.TypeFreeText, Question: a.MessageForUser, IdempotencyKey: strings.TrimSpace(a.UniqueID)}
	if strings.TrimSpace(a.MessageForUser) == "" {
		return req, hitl.Errorf(hitl.EINVALID, "message_for_user is required: say what you need from the user")
	}
	if req.IdempotencyKey == "" {
		return req, hitl.Errorf(hitl.EINVALID, "unique_id is required: make a fresh one (such as a UUID) for each request")
	}
	if len(req.IdempotencyKey) > hitl.MaxKeyLen {
		return req, hitl.Errorf(hitl.EINVALID, "unique_id is limited to %d bytes", hitl.MaxKeyLen)
	}
	t := float64(a.TimeoutSeconds)
	if t == 0 {
		t = DefaultTimeoutSeconds
	}
	if t < MinFeedbackTimeout || t > MaxFeedbackTimeout {
		return req, hitl.Errorf(hitl.EINVALID, "timeout_seconds must be between %d and %d; got %s", MinFeedbackTimeout, MaxFeedbackTimeout, formatSeconds(t))
	}
	req.Timeout = t
	if len(a.Options) > hitl.MaxOptions {
		return req, tooManyOptions(len(a.Options))
	}
	if len(a.Options) > 0 {
		req.Type = hitl.TypeSingleChoice
		for i, label := range a.Options {
			if strings.TrimSpace(label) == "" {
				return req, hitl.Errorf(hitl.EINVALID, "options[%d] is empty", i)
			}
			req.Options = append(req.Options, hitl.Option{Key: hitl.DeriveKey(label), Label: label})
		}
	}
	return req, nil
}

// AskHumanArgs are the arguments of an ask_human call.
type AskHumanArgs struct {
	Question        string          `json:"question"`
	InteractionType hitl.Type       `json:"interaction_type,omitempty"`
	Options         hitl.OptionList `json:"options,omitempty"`
	Context         string          `json:"context,omitempty"`
	Timeout         Seconds         `json:"timeout,omitempty"`
	FormSchema      json.RawMessage `json:"form_schema,omitempty"`
	DefaultResponse json.RawMessage `json:"default_response,omitempty"`
	OnTimeout       hitl.OnTimeout  `json:"on_timeout,omitempty"`
	// An action's review: the tool call, the schema an edit must meet,
	// the decisions allowed, and whether a rejection needs a reason.
	Action                *hitl.Action    `json:"action,omitempty"`
	ArgsSchema            json.RawMessage `json:"args_schema,omitempty"`
	Decisions             []hitl.Decision `json:"decisions,omitempty"`
	RejectRequiresMessage bool            `json:"reject_requires_message,omitempty"`
	// Escalation reminds or widens the targets while the question is
	// pending, as on the API's request; absent, the server's default
	// applies, and an empty list opts out of it.
	Escalation []hitl.EscalationStep `json:"escalation,omitzero"`
}

// Request validates the arguments and returns the question they ask. A
// missing interaction_type is action when there is an action, single_choice
// when there are options, form when there is a form_schema, else
// free_text. The question is required (for an action too: the tool
// offers it to models, which can always say what they are about to do).
// A form_schema, args_schema or action.args sent as a JSON
// string holding the object is accepted, as models sometimes do. Errors
// have code hitl.EINVALID; the engine checks the rest.
func (a AskHumanArgs) Request() (hitl.CreateRequest, error) {
	req := hitl.CreateRequest{
		Type:                  a.InteractionType,
		Question:              a.Question,
		Options:               a.Options,
		Context:               a.Context,
		DefaultResponse:       a.DefaultResponse,
		OnTimeout:             a.OnTimeout,
		Decisions:             a.Decisions,
		RejectRequiresMessage: a.RejectRequiresMessage,
		Escalation:            a.Escalation,
	}
	if req.Type == "" && a.Action != nil {
		req.Type = hitl.TypeAction
	}
	if strings.TrimSpace(a.Question) == "" {
		return req, hitl.Errorf(hitl.EINVALID, "question is required")
	}
	if req.Type == hitl.TypeHandoff {
		return req, hitl.Errorf(hitl.EINVALID, "ask_human asks a question and waits; to give the conversation to a person, call %s", HandoffName)
	}
	if len(a.Options) > hitl.MaxOptions {
		return req, tooManyOptions(len(a.Options))
	}
	var err error
	if req.FormSchema, err = unquoteObject(a.FormSchema, "form_schema must be a JSON Schema object"); err != nil {
		return req, err
	}
	if req.ArgsSchema, err = unquoteObject(a.ArgsSchema, "args_schema must be a JSON Schema object"); err != nil {
		return req, err
	}
	if a.Action != nil {
		act := *a.Action
		if act.Args, err = unquoteObject(act.Args, "action.args must be a JSON object"); err != nil {
			return req, err
		}
		req.Action = &act
	}
	req.Type = req.InferredType()
	t := float64(a.Timeout)
	if t == 0 {
		t = DefaultTimeoutSeconds
	}
	if t < MinAskTimeout || t > MaxAskTimeout {
		return req, hitl.Errorf(hitl.EINVALID, "timeout must be between %d and %d seconds; got %s", MinAskTimeout, MaxAskTimeout, formatSeconds(t))
	}
	req.Timeout = t
	if err := hitl.CheckEscalation(a.Escalation, time.Duration(t*float64(time.Second))); err != nil {
		return req, err
	}
	return req, nil
}

// tooManyOptions is the error for n options, more than a question may
// have (the tools' schemas say maxItems).
func tooManyOptions(n int) error {
	return hitl.Errorf(hitl.EINVALID, "options: at most %d options; got %d", hitl.MaxOptions, n)
}

// unquoteObject returns raw, or the JSON it holds when it is a JSON string
// (as models sometimes send an object), nil for absent or null; problem
// is the error when a string holds no JSON.
func unquoteObject(raw json.RawMessage, problem string) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil || !json.Valid([]byte(s)) {
			return nil, hitl.Errorf(hitl.EINVALID, "%s", problem)
		}
		raw = bytes.TrimSpace([]byte(s))
	}
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	return raw, nil
}

// Seconds is a number of seconds that also accepts a numeric string
// ("300"), as models sometimes send.
type Seconds float64

// UnmarshalJSON accepts a JSON number or a string holding one.
func (s *Seconds) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*s = 0
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var str string
		if err := json.Unmarshal(b, &str); err == nil {
			b = []byte(strings.TrimSpace(str))
		}
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return &json.UnmarshalTypeError{Value: "non-number", Type: reflect.TypeFor[Seconds]()}
	}
	*s = Seconds(f)
	return nil
}

// Request returns the create request for a call of the named tool with the
// raw JSON arguments a model sent. Errors have code hitl.EINVALID (bad
// arguments) or hitl.ENOTFOUND (no such tool), with a message for the
// model.
func Request(name string, args json.RawMessage) (hitl.CreateRequest, error) {
	switch name {
	case HumanFeedbackName:
		var a HumanFeedbackArgs
		if err := decodeArgs(name, args, &a); err != nil {
			return hitl.CreateRequest{}, err
		}
		return a.Request()
	case AskHumanName:
		var a AskHumanArgs
		if err := decodeArgs(name, args, &a); err != nil {
			return hitl.CreateRequest{}, err
		}
		return a.Request()
	case HandoffName:
		var a HandoffArgs
		if err := decodeArgs(name, args, &a); err != nil {
			return hitl.CreateRequest{}, err
		}
		return a.Request()
	}
	return hitl.CreateRequest{}, hitl.Errorf(hitl.ENOTFOUND, "unknown tool %q: hitl offers %s, %s and %s", name, AskHumanName, HumanFeedbackName, HandoffName)
}

// decodeArgs decodes a model's arguments for the named tool, which may be
// absent, into v. An argument the tool does not take is refused, as its
// input schema says (additionalProperties: false): a model that sends one
// has misread the tool, and should learn so rather than have part of what
// it meant silently dropped.
func decodeArgs(tool string, args json.RawMessage, v any) error {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = []byte("{}")
	}
	if args[0] != '{' || !json.Valid(args) {
		return hitl.Errorf(hitl.EINVALID, "arguments must be a JSON object")
	}
	d := json.NewDecoder(bytes.NewReader(args))
	d.DisallowUnknownFields()
	err := d.Decode(v)
	if err == nil {
		return nil
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		field, _, _ := strings.Cut(typeErr.Field, ".")
		want, ok := fieldTypes[field]
		if !ok {
			want = "of another type"
		}
		return hitl.Errorf(hitl.EINVALID, "%s must be %s", field, want)
	}
	if name, ok := unknownField(err); ok {
		return hitl.Errorf(hitl.EINVALID, "unknown argument %q: %s takes %s", name, tool, argNames(v))
	}
	// Errors from the fields' own decoders (OptionList) say what is wrong.
	return hitl.Errorf(hitl.EINVALID, "invalid arguments: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// unknownField returns the name in encoding/json's error for an unknown
// field (`json: unknown field "x"`), which has no type of its own.
func unknownField(err error) (string, bool) {
	rest, ok := strings.CutPrefix(err.Error(), "json: unknown field ")
	if !ok {
		return "", false
	}
	name, uerr := strconv.Unquote(rest)
	if uerr != nil {
		return rest, true
	}
	return name, true
}

// argNames lists the arguments of v, an arguments struct, from its JSON
// tags, in order: "a, b and c".
func argNames(v any) string {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var names []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// fieldTypes says what each argument must be, for error messages.
var fieldTypes = map[string]string{
	"message_for_user":        "a string",
	"unique_id":               "a string",
	"options":                 "an array of strings",
	"timeout_seconds":         "a number of seconds",
	"question":                "a string",
	"interaction_type":        "a string",
	"context":                 "a string",
	"timeout":                 "a number of seconds",
	"on_timeout":              "a string",
	"action":                  `an object {"name": …, "args": {…}, "description": …}`,
	"args_schema":             "a JSON Schema object",
	"decisions":               "an array of approve, edit, reject and respond",
	"reject_requires_message": "true or false",
	"escalation":              `an array of steps {"after": "10m", "remind": true, "add_targets": {…}, "channels": […], …}`,
}

// formatSeconds prints a number of seconds without needless decimals.
func formatSeconds(f float64) string {
	return strconv.FormatFloat(f, 'f', -1, 64)
}
