package hitl

import (
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"
)

// TypeAction is a tool call awaiting review: the person approves it, edits
// its arguments, rejects it with a reason, or responds instead of it
// running. Its value is a decision object (see NormalizeActionAnswer).
const TypeAction Type = "action"

// Limits of an action request.
const (
	MaxActionNameLen        = 200       // characters
	MaxActionArgsLen        = 256 << 10 // bytes, encoded
	MaxActionDescriptionLen = 4 << 10   // bytes
	MaxActionMessageLen     = 16 << 10  // bytes, of a reject or respond message
)

// Action is the tool call an action interaction asks about.
type Action struct {
	// Name is the tool's name, such as "Bash" or "Write".
	Name string `json:"name"`
	// Args are the tool's arguments, a JSON object, as the agent proposed
	// them.
	Args json.RawMessage `json:"args"`
	// Description says what the call is for, for the person.
	Description string `json:"description,omitempty"`
	// Kind is what the call does in every agent's terms (see Kinds): the
	// same act that agents name Bash, shell or run_shell_command is
	// "shell". "" when it is none of them: the call is known by Name only.
	Kind string `json:"kind,omitempty"`
	// Input is the call in its kind's terms (see Kinds), a JSON object,
	// as the agent's adapter read it from Args; nil without a kind. Rules
	// written on a kind match it.
	Input json.RawMessage `json:"input,omitempty"`
	// Risks say why the call is risky, when it is (see Risk): set by the
	// server when the question is created, never taken from the agent.
	Risks []Risk `json:"risks,omitempty"`
}

// Risk is one reason an action is marked risky, for its reviewer.
type Risk struct {
	// Why says what makes the call risky, for people: "pipes a download
	// into a shell".
	Why string `json:"why"`
}

// Risky reports whether the action carries a risk mark.
func (a *Action) Risky() bool { return a != nil && len(a.Risks) > 0 }

// Decision is what a person decided about an action.
type Decision string

// The four decisions.
const (
	DecisionApprove Decision = "approve" // run it as proposed
	DecisionEdit    Decision = "edit"    // run it with other arguments
	DecisionReject  Decision = "reject"  // do not run it (with a reason)
	DecisionRespond Decision = "respond" // do not run it; here is a reply instead
)

// AllDecisions returns the four decisions in their usual order: what an
// action interaction allows when its request names none.
func AllDecisions() []Decision {
	return []Decision{DecisionApprove, DecisionEdit, DecisionReject, DecisionRespond}
}

// Valid reports whether d is one of the four decisions.
func (d Decision) Valid() bool {
	switch d {
	case DecisionApprove, DecisionEdit, DecisionReject, DecisionRespond:
		return true
	}
	return false
}

// ActionReview is what an action interaction asks of its reviewer: the
// call, the schema an edit must meet, the decisions allowed, and whether a
// rejection needs a reason. Stores keep it as one JSON value.
type ActionReview struct {
	Action                *Action         `json:"action"`
	ArgsSchema            json.RawMessage `json:"args_schema,omitempty"`
	Decisions             []Decision      `json:"decisions"`
	RejectRequiresMessage bool            `json:"reject_requires_message"`
}

// Review returns in's action review, or nil when in is not an action.
func (in *Interaction) Review() *ActionReview {
	if in.Type != TypeAction || in.Action == nil {
		return nil
	}
	return &ActionReview{Action: in.Action, ArgsSchema: in.ArgsSchema, Decisions: in.Decisions, RejectRequiresMessage: in.RejectRequiresMessage}
}

// SetReview sets in's action fields from r (a nil r clears them).
func (in *Interaction) SetReview(r *ActionReview) {
	if r == nil {
		r = &ActionReview{}
	}
	in.Action, in.ArgsSchema, in.Decisions, in.RejectRequiresMessage = r.Action, r.ArgsSchema, r.Decisions, r.RejectRequiresMessage
}

// Allows reports whether the person may decide d.
func (in *Interaction) Allows(d Decision) bool {
	for _, x := range in.Decisions {
		if x == d {
			return true
		}
	}
	return false
}

// MarshalJSON encodes an interaction; an action's reject_requires_message
// is always present, false included, so readers need not guess a default,
// and an action carries its summary.
// HTML characters are left as they are: the caller's encoder escapes
// them or not, as it would without this method.
func (in Interaction) MarshalJSON() ([]byte, error) {
	type plain Interaction // without this method
	if in.Type != TypeAction {
		return encodeJSON(plain(in))
	}
	return encodeJSON(struct {
		plain
		// Shallower than plain's field of the same name, so it wins.
		RejectRequiresMessage bool `json:"reject_requires_message"`
		// Summary says in one line what the call will do (Action.Summary).
		Summary string `json:"summary,omitempty"`
	}{plain(in), in.RejectRequiresMessage, in.Action.Summary()})
}

// setAction validates and sets the action fields of req on in: required
// for an action and refused on every other type. An action without a
// question gets "Run <name>?".
func (in *Interaction) setAction(req CreateRequest) error {
	if in.Type != TypeAction {
		if req.Action != nil || !isNull(req.ArgsSchema) || len(req.Decisions) > 0 || req.RejectRequiresMessage {
			return Errorf(EINVALID, "action, args_schema, decisions and reject_requires_message are only for interaction_type action")
		}
		return nil
	}
	if req.Action == nil {
		return Errorf(EINVALID, `action needs "action": {"name": …, "args": {…}}`)
	}
	a := &Action{Name: strings.TrimSpace(req.Action.Name), Description: req.Action.Description}
	switch {
	case a.Name == "":
		return Errorf(EINVALID, "action.name is required")
	case utf8.RuneCountInString(a.Name) > MaxActionNameLen:
		return Errorf(EINVALID, "action.name is limited to %d characters", MaxActionNameLen)
	case len(a.Description) > MaxActionDescriptionLen:
		return Errorf(EINVALID, "action.description is limited to %d bytes", MaxActionDescriptionLen)
	case !validText(a.Name) || !validText(a.Description):
		return Errorf(EINVALID, "action.name and action.description must be valid UTF-8 without NUL bytes")
	case in.SourceAgent == AnyAgent:
		return Errorf(EINVALID, "source_agent %q is reserved for rules that apply to every agent", AnyAgent)
	}
	args, err := actionArgs(req.Action.Args)
	if err != nil {
		return err
	}
	a.Args = args
	if err := a.setKind(req.Action.Kind, req.Action.Input); err != nil {
		return err
	}
	in.Action = a
	if !isNull(req.ArgsSchema) {
		if _, err := CompileSchema(req.ArgsSchema); err != nil {
			return renameSchemaError(err, "args_schema")
		}
		in.ArgsSchema = compactJSON(req.ArgsSchema)
	}
	if err := in.setDecisions(req.Decisions); err != nil {
		return err
	}
	in.RejectRequiresMessage = req.RejectRequiresMessage
	if in.Question == "" {
		in.Question = "Run " + a.Name + "?"
	}
	return nil
}

// setKind validates and sets a's kind and its input: both or neither, a
// kind of Kinds, an input that is a JSON object.
func (a *Action) setKind(kind string, input json.RawMessage) error {
	kind = strings.TrimSpace(kind)
	switch {
	case kind == "" && isNull(input):
		return nil
	case kind == "":
		return Errorf(EINVALID, "action.input goes with action.kind")
	case !validKind(kind):
		return Errorf(EINVALID, "action.kind must be one of %s; got %q (an agent's own tool is known by its name alone)", strings.Join(Kinds(), ", "), kind)
	}
	v, err := actionArgs(input)
	if err != nil {
		return Errorf(EINVALID, "%s", strings.ReplaceAll(ErrorMessage(err), "action.args", "action.input"))
	}
	a.Kind, a.Input = kind, v
	return nil
}

// actionArgs checks an action's proposed arguments: a JSON object (null
// or absent is {}), at most MaxActionArgsLen encoded, each field once. It
// returns them compacted, in the agent's order.
func actionArgs(raw json.RawMessage) (json.RawMessage, error) {
	if isNull(raw) {
		return json.RawMessage("{}"), nil
	}
	raw = trimJSONSpace(raw)
	if len(raw) > MaxActionArgsLen {
		return nil, Errorf(EINVALID, "action.args is limited to %d bytes", MaxActionArgsLen)
	}
	if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		return nil, Errorf(EINVALID, "action.args must be a JSON object")
	}
	if k := duplicateKey(raw); k != "" {
		return nil, Errorf(EINVALID, "action.args has field %q twice", k)
	}
	return compactJSON(raw), nil
}

// setDecisions sets the decisions allowed: a non-empty list without
// repeats, or all four when none are given.
func (in *Interaction) setDecisions(ds []Decision) error {
	if len(ds) == 0 {
		in.Decisions = AllDecisions()
		return nil
	}
	seen := make(map[Decision]bool, len(ds))
	out := make([]Decision, len(ds))
	for i, d := range ds {
		if !d.Valid() {
			return Errorf(EINVALID, "decisions[%d] must be approve, edit, reject or respond; got %q", i, d)
		}
		if seen[d] {
			return Errorf(EINVALID, "decisions must not repeat; %q appears twice", d)
		}
		seen[d] = true
		out[i] = d
	}
	in.Decisions = out
	return nil
}

// renameSchemaError returns CompileSchema's error about a form_schema as
// one about the schema called name (the same checks apply to both).
func renameSchemaError(err error, name string) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	return &Error{Code: e.Code, Message: strings.ReplaceAll(e.Message, "form_schema", name)}
}

// decisionList renders decisions as "approve, reject".
func decisionList(ds []Decision) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = string(d)
	}
	return strings.Join(s, ", ")
}
