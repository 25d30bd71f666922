package hitl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// RuleEffect is what a rule decides: allow (approve) or deny (reject).
type RuleEffect string

// Rule effects.
const (
	RuleAllow RuleEffect = "allow"
	RuleDeny  RuleEffect = "deny"
)

// AnyAgent is the source_agent of a rule that applies to every agent; only
// admins make such rules.
const AnyAgent = "*"

// ChannelRule is the channel of an answer a rule gave, without a person;
// its responded_by is "rule:<id>".
const ChannelRule = "rule"

// Limits of a rule.
const (
	MaxRuleArgLen  = 200     // bytes of match.arg
	MaxRuleGlobLen = 1 << 10 // bytes of a glob or prefix
	MaxRuleEquals  = 16 << 10
	MaxRuleTTL     = 10 * 366 * 24 * time.Hour
)

// Rule is a sticky decision: actions of one agent (or, made by an admin,
// of every agent) with one name, whose arguments match, are approved
// (allow) or rejected (deny) at once, without asking anyone. Rules are
// revoked, never deleted, so the audit trail keeps them.
type Rule struct {
	ID          string     `json:"rule_id"`
	Effect      RuleEffect `json:"effect"`
	SourceAgent string     `json:"source_agent"` // exact, or AnyAgent
	// AskedBy is the authenticated caller (an API token's or a person's
	// name) whose actions the rule decides, or "" for whoever asks under
	// SourceAgent. A rule an answer's "always" makes is bound to the
	// caller that asked the question, since source_agent is only what an
	// agent says it is.
	AskedBy    string `json:"asked_by"`
	ActionName string `json:"action_name"` // exact; "" for a rule on a kind
	// Kind, instead of ActionName, makes the rule decide every action of
	// that kind (see Kinds), whatever the agent calls its tool, and its
	// match reads the action's input rather than its args.
	Kind      string     `json:"kind,omitempty"`
	Match     *RuleMatch `json:"match"`   // nil: every call of the action
	Message   string     `json:"message"` // a deny rule's reason
	CreatedBy string     `json:"created_by"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at"`
	RevokedAt *time.Time `json:"revoked_at"`
	RevokedBy string     `json:"revoked_by"`
	// InteractionID is the interaction whose answer made the rule ("an
	// always"), empty for a rule made through the rules API.
	InteractionID string `json:"interaction_id,omitempty"`
	// Within, when set, limits the rule to the actions this person could
	// answer: those untargeted or targeted at the user or one of the
	// groups. A rule a responder's answer makes is so limited to its
	// maker (as they were then); an admin's, or one made through the
	// rules API, is not.
	Within *Audience `json:"within,omitempty"`
}

// RuleMatch is a rule's predicate on one argument of the action: exactly
// one of Prefix, Command, Glob and Equals is set. An allow rule and a
// deny rule read it differently, each the safe way (see rulematch.go).
type RuleMatch struct {
	// Arg names the argument, such as "command" or "file_path".
	Arg string `json:"arg"`
	// Prefix is a shell command, such as "git status": an allow rule
	// matches a command that is exactly it, or it followed by further
	// plain arguments (so "git status --output=/tmp/x" too); a deny rule
	// matches a command that may run it anywhere.
	Prefix string `json:"prefix,omitempty"`
	// Command is a shell command that an allow rule matches only
	// exactly, without further arguments (quoting and spacing aside); a
	// deny rule reads it as Prefix.
	Command string `json:"command,omitempty"`
	// Glob matches a path (a string) by a doublestar pattern ("src/**"),
	// after cleaning it; for an allow rule, a path with ".." segments
	// never matches.
	Glob string `json:"glob,omitempty"`
	// Equals matches an argument equal to this JSON value.
	Equals json.RawMessage `json:"equals,omitempty"`
}

// UnmarshalJSON decodes a match strictly: a field it does not know (a
// misspelt "prefx") would otherwise widen the rule silently.
func (m *RuleMatch) UnmarshalJSON(b []byte) error {
	type plain RuleMatch
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	var p plain
	if err := d.Decode(&p); err != nil {
		return fmt.Errorf(`match must be {"arg": …} with one of "prefix", "command", "glob" and "equals": %s`, strings.TrimPrefix(err.Error(), "json: "))
	}
	*m = RuleMatch(p)
	return nil
}

// RuleRequest is what makes a rule: the rules API's body, or an answer's
// "always" with the interaction's scope.
type RuleRequest struct {
	Effect      RuleEffect `json:"effect"`
	SourceAgent string     `json:"source_agent"`
	// AskedBy, when set, limits the rule to the actions that caller asks
	// (see Rule.AskedBy).
	AskedBy    string `json:"asked_by,omitempty"`
	ActionName string `json:"action_name"`
	// Kind, instead of ActionName, scopes the rule to a kind of action.
	Kind    string     `json:"kind,omitempty"`
	Match   *RuleMatch `json:"match"`
	Message string     `json:"message,omitempty"`
	// ExpiresAt or TTLSeconds (not both) end the rule; neither keeps it
	// until it is revoked.
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	TTLSeconds float64    `json:"ttl_seconds,omitempty"`
	// ConfirmRisky says the person confirmed a rule that allows an
	// action marked risky (an answer's always.confirm_risky); without
	// it, AlwaysRule refuses such a rule.
	ConfirmRisky bool `json:"-"`
}

// NewRule validates req and returns the rule it describes, made by caller
// at now (times to the millisecond). The ID is left for the caller to set.
// Errors have code EINVALID.
func NewRule(req RuleRequest, caller Caller, now time.Time) (*Rule, error) {
	now = now.UTC().Truncate(time.Millisecond)
	r := &Rule{
		Effect:      req.Effect,
		SourceAgent: strings.TrimSpace(req.SourceAgent),
		AskedBy:     strings.TrimSpace(req.AskedBy),
		ActionName:  strings.TrimSpace(req.ActionName),
		Kind:        strings.TrimSpace(req.Kind),
		Match:       req.Match,
		Message:     strings.TrimSpace(req.Message),
		CreatedBy:   caller.Name,
		CreatedAt:   now,
	}
	switch {
	case r.Effect != RuleAllow && r.Effect != RuleDeny:
		return nil, Errorf(EINVALID, "effect must be allow or deny; got %q", req.Effect)
	case r.SourceAgent == "":
		return nil, Errorf(EINVALID, "source_agent is required (%q for every agent)", AnyAgent)
	case r.ActionName == "" && r.Kind == "":
		return nil, Errorf(EINVALID, "action_name is required (or kind, for every agent's tool of one kind)")
	case r.ActionName != "" && r.Kind != "":
		return nil, Errorf(EINVALID, "give action_name or kind, not both")
	case r.Kind != "" && !validKind(r.Kind):
		return nil, Errorf(EINVALID, "kind must be one of %s; got %q", strings.Join(Kinds(), ", "), r.Kind)
	case utf8.RuneCountInString(r.SourceAgent) > MaxActionNameLen || utf8.RuneCountInString(r.ActionName) > MaxActionNameLen ||
		utf8.RuneCountInString(r.AskedBy) > MaxActionNameLen:
		return nil, Errorf(EINVALID, "source_agent, asked_by and action_name are limited to %d characters", MaxActionNameLen)
	case len(r.Message) > MaxActionMessageLen:
		return nil, Errorf(EINVALID, "message is limited to %d bytes", MaxActionMessageLen)
	case r.Effect == RuleAllow && r.Message != "":
		return nil, Errorf(EINVALID, "message is only for deny rules (the reason the agent reads)")
	case !validText(r.SourceAgent) || !validText(r.ActionName) || !validText(r.Message):
		return nil, Errorf(EINVALID, "source_agent, action_name and message must be valid UTF-8 without NUL bytes")
	}
	if err := r.Match.validate(); err != nil {
		return nil, err
	}
	exp, err := ruleExpiry(req.ExpiresAt, req.TTLSeconds, now)
	if err != nil {
		return nil, err
	}
	r.ExpiresAt = exp
	return r, nil
}

// ruleExpiry returns when a rule made at now ends: expiresAt, or ttl
// seconds from now, or nil for never.
func ruleExpiry(expiresAt *time.Time, ttl float64, now time.Time) (*time.Time, error) {
	switch {
	case expiresAt != nil && ttl != 0:
		return nil, Errorf(EINVALID, "give expires_at or ttl_seconds, not both")
	case math.IsNaN(ttl) || ttl < 0 || ttl > MaxRuleTTL.Seconds():
		return nil, Errorf(EINVALID, "ttl_seconds must be a positive number of seconds, at most %d", int64(MaxRuleTTL.Seconds()))
	case ttl > 0:
		t := now.Add(time.Duration(ttl * float64(time.Second))).Truncate(time.Millisecond)
		if !t.After(now) {
			return nil, Errorf(EINVALID, "ttl_seconds must be at least a millisecond")
		}
		return &t, nil
	case expiresAt != nil:
		t := expiresAt.UTC().Truncate(time.Millisecond)
		if !t.After(now) {
			return nil, Errorf(EINVALID, "expires_at must be in the future")
		}
		if t.Sub(now) > MaxRuleTTL {
			return nil, Errorf(EINVALID, "expires_at is at most %s away", MaxRuleTTL)
		}
		return &t, nil
	}
	return nil, nil
}

// validate checks a match: nil (every call) or one argument and exactly
// one predicate that can match something.
func (m *RuleMatch) validate() error {
	if m == nil {
		return nil
	}
	set := 0
	for _, ok := range []bool{m.Prefix != "", m.Command != "", m.Glob != "", m.Equals != nil} {
		if ok {
			set++
		}
	}
	switch {
	case strings.TrimSpace(m.Arg) == "":
		return Errorf(EINVALID, "match.arg is required: the argument to match, such as \"command\"")
	case len(m.Arg) > MaxRuleArgLen || !validText(m.Arg):
		return Errorf(EINVALID, "match.arg is limited to %d bytes of text", MaxRuleArgLen)
	case set != 1:
		return Errorf(EINVALID, "match needs exactly one of prefix, command, glob and equals")
	case len(m.Prefix) > MaxRuleGlobLen || len(m.Command) > MaxRuleGlobLen || len(m.Glob) > MaxRuleGlobLen || len(m.Equals) > MaxRuleEquals:
		return Errorf(EINVALID, "match.prefix, match.command and match.glob are limited to %d bytes, match.equals to %d", MaxRuleGlobLen, MaxRuleEquals)
	}
	switch {
	case m.Prefix != "" || m.Command != "":
		field, cmd := "prefix", m.Prefix
		if cmd == "" {
			field, cmd = "command", m.Command
		}
		if cmd != strings.TrimSpace(cmd) || !validText(cmd) {
			return Errorf(EINVALID, "match.%s must not start or end with white space", field)
		}
		if _, err := m.commandPattern(); err != nil {
			return Errorf(EINVALID, "match.%s must be one plain command: no shell control syntax (; & | ` $( > < or a line break), variables, patterns or assignments; a command holding them never matches an allow rule", field)
		}
	case m.Glob != "":
		if !validText(m.Glob) || !doublestar.ValidatePattern(m.Glob) {
			return Errorf(EINVALID, "match.glob is not a valid pattern")
		}
		if hasDotDot(m.Glob) {
			return Errorf(EINVALID, "match.glob must not hold \"..\" segments: a path holding them never matches")
		}
		// Paths are cleaned before they are matched, so the pattern is
		// too: "./src/**" would otherwise never match "./src/a.go".
		m.Glob = path.Clean(m.Glob)
	default:
		if !json.Valid(m.Equals) {
			return Errorf(EINVALID, "match.equals must be a JSON value")
		}
		m.Equals = compactJSON(m.Equals)
	}
	return nil
}

// Active reports whether r may decide actions at now: not revoked, and
// not past its expiry.
func (r *Rule) Active(now time.Time) bool {
	return r.RevokedAt == nil && (r.ExpiresAt == nil || now.Before(*r.ExpiresAt))
}

// Answer returns the answer r gives: {"decision":"approve"} for allow;
// {"decision":"reject","message":…} for deny, with r's message or
// "denied by rule <id>".
func (r *Rule) Answer() json.RawMessage {
	if r.Effect == RuleAllow {
		return json.RawMessage(`{"decision":"approve"}`)
	}
	msg := r.Message
	if msg == "" {
		msg = "denied by rule " + r.ID
	}
	v, _ := encodeJSON(actionValue{Decision: DecisionReject, Message: msg})
	return v
}

// Responder returns the responded_by of an answer r gave: "rule:<id>".
func (r *Rule) Responder() string { return "rule:" + r.ID }
