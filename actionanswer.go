package hitl

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"
)

// decisionWords maps what a person or an older client may send as a
// decision, in any case, to the decision.
var decisionWords = map[string]Decision{
	"approve": DecisionApprove, "approved": DecisionApprove, "yes": DecisionApprove,
	"allow": DecisionApprove, "accept": DecisionApprove, "true": DecisionApprove,
	"reject": DecisionReject, "no": DecisionReject, "deny": DecisionReject, "false": DecisionReject,
	"edit": DecisionEdit, "respond": DecisionRespond,
}

// ActionAnswer is a validated answer to an action.
type ActionAnswer struct {
	// Value is the canonical answer, as stored in result.value:
	// {"decision":"approve"}, {"decision":"edit","args":{…}},
	// {"decision":"reject"[,"message":…]} or
	// {"decision":"respond","message":…}.
	Value    json.RawMessage
	Decision Decision
	// Args are the arguments to run the action with: the proposed ones
	// for approve, the edited ones (canonical: compact, keys sorted) for
	// edit; nil for reject and respond.
	Args json.RawMessage
	// Message is the reason of a reject, or the reply of a respond.
	Message string
	// ArgsDiff is the RFC 6902 patch from the proposed arguments to the
	// edited ones, for an edit; nil otherwise.
	ArgsDiff json.RawMessage
	// Always, when the person asked for it with an approve or a reject,
	// is the rule to make: its effect, match, message and expiry are set,
	// its scope is left for Always.Rule.
	Always *RuleRequest
}

// actionValue is the canonical answer's JSON.
type actionValue struct {
	Decision Decision        `json:"decision"`
	Args     json.RawMessage `json:"args,omitempty"`
	Message  string          `json:"message,omitempty"`
}

// actionAnswerJSON is an answer object as sent.
type actionAnswerJSON struct {
	Decision string          `json:"decision"`
	Args     json.RawMessage `json:"args"`
	Message  *string         `json:"message"`
	Always   json.RawMessage `json:"always"`
}

// alwaysJSON is an answer's "always" as sent.
type alwaysJSON struct {
	Match      *RuleMatch `json:"match"`
	ExpiresAt  *time.Time `json:"expires_at"`
	TTLSeconds float64    `json:"ttl_seconds"`
	// Scope is AlwaysThisAgent ("" too) or AlwaysAllAgents.
	Scope string `json:"scope"`
	// ConfirmRisky confirms a rule that allows an action marked risky.
	ConfirmRisky bool `json:"confirm_risky"`
}

// The scopes of an answer's "always".
const (
	// AlwaysThisAgent makes a rule on the action's name, for its agent.
	AlwaysThisAgent = "agent"
	// AlwaysAllAgents makes a rule on the action's kind, for every agent
	// the same caller asks for (so one "always allow git status" serves
	// Claude Code, Codex and Gemini CLI alike); its match reads the
	// action's input.
	AlwaysAllAgents = "all_agents"
)

// NormalizeActionAnswer validates raw as an answer to the action in and
// returns it in canonical form. Accepted: the canonical objects (see
// ActionAnswer.Value), with "always" on approve and reject; true, false
// and the words approve, approved, yes, allow, accept, reject, no, deny
// (any case, also as "decision"); an object sent as a JSON string. An edit
// whose arguments equal the proposed ones is an approve. Errors have code
// EVALUE and say why: a decision the interaction does not allow, edited
// arguments not valid against args_schema (each failing field named), a
// missing reason, an unknown field.
func NormalizeActionAnswer(in *Interaction, raw json.RawMessage) (*ActionAnswer, error) {
	if in.Type != TypeAction || in.Action == nil {
		return nil, Errorf(EVALUE, "interaction %s is not an action", in.ID)
	}
	raw = trimJSONSpace(raw)
	if isNull(raw) {
		return nil, Errorf(EVALUE, "value is required")
	}
	if !json.Valid(raw) {
		return nil, Errorf(EVALUE, "value is not valid JSON")
	}
	var a actionAnswerJSON
	switch raw[0] {
	case '{':
		if err := decodeAnswerObject(raw, &a); err != nil {
			return nil, err
		}
	case '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
			return NormalizeActionAnswer(in, json.RawMessage(t)) // an object sent as a string
		}
		a.Decision = s
	case 't', 'f':
		a.Decision = string(raw)
	default:
		return nil, Errorf(EVALUE, `an action's value is {"decision": "approve" | "edit" | "reject" | "respond", …}`)
	}
	return in.actionAnswer(a)
}

// decodeAnswerObject decodes an answer object strictly: each field once,
// no unknown field, each of the right type.
func decodeAnswerObject(raw json.RawMessage, a *actionAnswerJSON) error {
	if k := duplicateKey(raw); k != "" {
		return Errorf(EVALUE, "value has field %q twice", k)
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	err := d.Decode(a)
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return Errorf(EVALUE, "%s must be a %s", typeErr.Field, map[string]string{"decision": "string", "message": "string"}[typeErr.Field])
	case strings.Contains(err.Error(), "unknown field"):
		return Errorf(EVALUE, "%s; an action's answer has decision, args, message and always", strings.TrimPrefix(err.Error(), "json: "))
	}
	return Errorf(EVALUE, "value is not a valid action answer: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// actionAnswer checks a decoded answer against in.
func (in *Interaction) actionAnswer(a actionAnswerJSON) (*ActionAnswer, error) {
	word := strings.ToLower(strings.TrimSpace(a.Decision))
	if word == "" {
		return nil, Errorf(EVALUE, "decision is required: %s", decisionList(in.Decisions))
	}
	d, ok := decisionWords[word]
	if !ok {
		return nil, Errorf(EVALUE, "decision must be one of approve, edit, reject, respond; got %q", a.Decision)
	}
	if !in.Allows(d) {
		return nil, Errorf(EVALUE, "%s is not allowed for this action; allowed: %s", d, decisionList(in.Decisions))
	}
	msg := ""
	if a.Message != nil {
		msg = strings.TrimSpace(*a.Message)
	}
	if len(msg) > MaxActionMessageLen {
		return nil, Errorf(EVALUE, "message is limited to %d bytes", MaxActionMessageLen)
	}
	out := &ActionAnswer{Decision: d, Message: msg}
	var err error
	switch d {
	case DecisionApprove:
		err = in.approveAnswer(a, out)
	case DecisionEdit:
		err = in.editAnswer(a, out)
	case DecisionReject:
		if in.RejectRequiresMessage && msg == "" {
			err = Errorf(EVALUE, `a reason is required to reject this action: send {"decision": "reject", "message": "…"}`)
		}
	case DecisionRespond:
		if msg == "" {
			err = Errorf(EVALUE, `respond needs a message: send {"decision": "respond", "message": "…"}`)
		}
	}
	if err == nil && !isNull(a.Args) && d != DecisionApprove && d != DecisionEdit {
		err = Errorf(EVALUE, "args are only for edit")
	}
	if err == nil && msg != "" && d != DecisionReject && d != DecisionRespond {
		err = Errorf(EVALUE, "message is only for reject and respond")
	}
	if err == nil {
		out.Always, err = parseAlways(a.Always, a.Decision, out)
	}
	if err != nil {
		return nil, err
	}
	out.Value, err = encodeJSON(actionValue{Decision: out.Decision, Args: editedArgs(out), Message: out.Message})
	return out, err
}

// editedArgs returns the args the canonical value carries: an edit's.
func editedArgs(a *ActionAnswer) json.RawMessage {
	if a.Decision == DecisionEdit {
		return a.Args
	}
	return nil
}

// approveAnswer completes an approve: it runs the proposed arguments;
// arguments sent with it must be those.
func (in *Interaction) approveAnswer(a actionAnswerJSON, out *ActionAnswer) error {
	if !isNull(a.Args) && !JSONEqual(a.Args, in.Action.Args) {
		return Errorf(EVALUE, "args differ from the action's; send decision edit to change them")
	}
	out.Args = in.Action.Args
	return nil
}

// editAnswer completes an edit: the arguments, an object valid against
// args_schema if there is one, and their difference from the proposed
// ones. Equal arguments make it an approve.
func (in *Interaction) editAnswer(a actionAnswerJSON, out *ActionAnswer) error {
	if isNull(a.Args) {
		return Errorf(EVALUE, `edit needs args: send {"decision": "edit", "args": {…}}`)
	}
	if len(a.Args) > MaxActionArgsLen {
		return Errorf(EVALUE, "args are limited to %d bytes", MaxActionArgsLen)
	}
	args, err := canonicalObject(in.ArgsSchema, a.Args, "args")
	if err != nil {
		return err
	}
	diff, err := JSONPatch(in.Action.Args, args)
	if err != nil {
		return Errorf(EVALUE, "args: %v", err)
	}
	if diff == nil {
		out.Decision, out.Args = DecisionApprove, in.Action.Args
		return nil
	}
	out.Args, out.ArgsDiff = args, diff
	return nil
}

// parseAlways reads an answer's "always": absent, null or false for none;
// true or {} for a rule on every call of the action; else {"match",
// "expires_at" | "ttl_seconds"}. Only an approve (sent as such: not an
// edit that changed nothing) or a reject may carry one; a reject's rule
// denies with the reject's message.
func parseAlways(raw json.RawMessage, sent string, out *ActionAnswer) (*RuleRequest, error) {
	raw = trimJSONSpace(raw)
	if isNull(raw) || bytes.Equal(raw, []byte("false")) {
		return nil, nil
	}
	edit := strings.EqualFold(strings.TrimSpace(sent), string(DecisionEdit))
	if edit || out.Decision != DecisionApprove && out.Decision != DecisionReject {
		return nil, Errorf(EVALUE, "always is only for approve and reject")
	}
	var al alwaysJSON
	if !bytes.Equal(raw, []byte("true")) {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		if err := d.Decode(&al); err != nil {
			return nil, Errorf(EVALUE, `always must be true or {"match": …, "scope": …, "expires_at" or "ttl_seconds": …, "confirm_risky": …}: %s`, strings.TrimPrefix(err.Error(), "json: "))
		}
	}
	if al.Scope != "" && al.Scope != AlwaysThisAgent && al.Scope != AlwaysAllAgents {
		return nil, Errorf(EVALUE, "always.scope must be %q or %q", AlwaysThisAgent, AlwaysAllAgents)
	}
	if err := al.Match.validate(); err != nil {
		return nil, Errorf(EVALUE, "always: %s", ErrorMessage(err))
	}
	req := &RuleRequest{Effect: RuleAllow, Match: al.Match, ExpiresAt: al.ExpiresAt, TTLSeconds: al.TTLSeconds, ConfirmRisky: al.ConfirmRisky}
	if al.Scope == AlwaysAllAgents {
		req.SourceAgent = AnyAgent
	}
	if out.Decision == DecisionReject {
		req.Effect, req.Message = RuleDeny, out.Message
	}
	return req, nil
}

// AlwaysRule returns the rule an answer's "always" makes for the
// interaction in, by caller at now: scoped to in's source_agent, the
// caller that asked it (its created_by) and its action name, and, when
// caller is a responder, to the actions caller could answer (Rule.Within).
// Errors have code EVALUE: the interaction names no agent, the expiry
// is not in the future, or the rule would allow an action marked risky
// and req does not confirm it (ConfirmRisky).
func (in *Interaction) AlwaysRule(req *RuleRequest, caller Caller, now time.Time) (*Rule, error) {
	if in.SourceAgent == "" || in.SourceAgent == AnyAgent {
		return nil, Errorf(EVALUE, "always needs the action's agent: this interaction has no source_agent to scope a rule to")
	}
	if req.Effect == RuleAllow && in.Action.Risky() && !req.ConfirmRisky {
		return nil, Errorf(EVALUE, `always: this %s call is marked risky (%s); a rule that always allows calls like it needs "confirm_risky": true in always, sent only after the person confirmed it`, in.Action.Name, riskReasons(in.Action.Risks))
	}
	scoped := *req
	scoped.SourceAgent, scoped.AskedBy, scoped.ActionName = in.SourceAgent, in.CreatedBy, in.Action.Name
	if req.SourceAgent == AnyAgent { // AlwaysAllAgents: the kind, for every agent of the same caller
		if in.Action.Kind == "" {
			return nil, Errorf(EVALUE, "always.scope %q needs an action of a kind (%s); this %s call has none", AlwaysAllAgents, strings.Join(Kinds(), ", "), in.Action.Name)
		}
		if in.CreatedBy == "" {
			return nil, Errorf(EVALUE, "always.scope %q needs the caller that asked, to bind the rule to", AlwaysAllAgents)
		}
		if m := req.Match; m != nil {
			var fields map[string]json.RawMessage
			_ = json.Unmarshal(in.Action.Input, &fields) // an object: validated when it was asked
			if _, ok := fields[m.Arg]; !ok {
				return nil, Errorf(EVALUE, "always.match.arg %q is not a field of the %s input of this call: a rule for all agents matches the input's fields", m.Arg, in.Action.Kind)
			}
		}
		scoped.SourceAgent, scoped.ActionName, scoped.Kind = AnyAgent, "", in.Action.Kind
	}
	r, err := NewRule(scoped, caller, now)
	if err != nil {
		return nil, Errorf(EVALUE, "always: %s", ErrorMessage(err))
	}
	r.InteractionID = in.ID
	if caller.Role == RoleResponder {
		r.Within = &Audience{User: caller.Name, Groups: slices.Clone(caller.Groups)}
	}
	return r, nil
}

// canonicalObject checks that raw is a JSON object, each field once,
// valid against schema when there is one, and returns it compact with its
// keys sorted. Errors have code EVALUE and name what, and each failing
// field as form errors do.
func canonicalObject(schema, raw json.RawMessage, what string) (json.RawMessage, error) {
	if schema != nil {
		return validateObject(schema, raw, what, MaxActionArgsLen)
	}
	raw = trimJSONSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		return nil, Errorf(EVALUE, "%s must be a JSON object", what)
	}
	if k := duplicateKey(raw); k != "" {
		return nil, Errorf(EVALUE, "%s has field %q twice", what, k)
	}
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, Errorf(EVALUE, "%s must be a JSON object", what)
	}
	return encodeJSON(v)
}

// riskReasons joins the reasons of risks for a message: "sudo runs as
// root; deletes recursively".
func riskReasons(risks []Risk) string {
	whys := make([]string, len(risks))
	for i, r := range risks {
		whys[i] = r.Why
	}
	return strings.Join(whys, "; ")
}
