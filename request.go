package hitl

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Limits bound what a request may ask for, field by field, so that no
// field can make an interaction large: an interaction is read, held and
// written whole by every list, stream and page that carries it, hundreds
// at a time. Lengths are in bytes of UTF-8. The "Limits" table of
// docs/api.md lists them with the reasons; the form's schema and answers have their
// own (MaxFormSchemaLen and the rest, in schema.go).
const (
	// MaxQuestionLen: the question is the whole message of the
	// human_feedback contract, which has no context field.
	MaxQuestionLen = 16 << 10
	// MaxContextLen: supporting detail, such as a diff or a log excerpt.
	MaxContextLen = 64 << 10
	// MaxOptions: Slack's menus hold 100, and more is a search, not a
	// choice.
	MaxOptions = 100
	// MaxKeyLen bounds option keys and idempotency keys.
	MaxKeyLen = 200
	// MaxLabelLen bounds option labels: a button's text.
	MaxLabelLen = 200
	// MaxDescriptionLen bounds option descriptions: a sentence or two.
	MaxDescriptionLen = 1 << 10
	// MaxProvenanceLen bounds source_agent and session_id. (Target names
	// name users and groups, whose names are at most MaxNameLen.)
	MaxProvenanceLen = 200
	// MaxTargets bounds targets.users and targets.groups, each.
	MaxTargets = 100
	// MaxMetadataLen bounds metadata, encoded as JSON.
	MaxMetadataLen = 16 << 10
)

// Default timing for requests that name none.
const (
	DefaultTimeout = time.Hour
	MaxTimeout     = 30 * 24 * time.Hour
)

// CreateRequest is what an agent sends to ask a question.
type CreateRequest struct {
	Type       Type            `json:"interaction_type,omitempty"`
	Question   string          `json:"question"`
	Context    string          `json:"context,omitempty"`
	Options    OptionList      `json:"options,omitempty"`
	FormSchema json.RawMessage `json:"form_schema,omitempty"`
	// Action is the tool call to review, for interaction_type action
	// (with ArgsSchema, Decisions and RejectRequiresMessage; see action.go).
	Action                *Action         `json:"action,omitempty"`
	ArgsSchema            json.RawMessage `json:"args_schema,omitempty"`
	Decisions             []Decision      `json:"decisions,omitempty"`
	RejectRequiresMessage bool            `json:"reject_requires_message,omitempty"`
	DefaultResponse       json.RawMessage `json:"default_response,omitempty"`
	Timeout               float64         `json:"timeout,omitempty"`  // seconds
	Deadline              *time.Time      `json:"deadline,omitempty"` // absolute; wins over Timeout
	OnTimeout             OnTimeout       `json:"on_timeout,omitempty"`
	IdempotencyKey        string          `json:"idempotency_key,omitempty"`
	SourceAgent           string          `json:"source_agent,omitempty"`
	SessionID             string          `json:"session_id,omitempty"`
	Metadata              map[string]any  `json:"metadata,omitempty"`
	Targets               *Targets        `json:"targets,omitempty"`
	// Notify overrides the server's notification settings per channel
	// (Slack's delay and channel, or Slack off).
	Notify *Notify `json:"notify,omitempty"`
	// CallbackURL, when set, is POSTed the final interaction once it
	// ends (answered, expired or cancelled), signed per Standard
	// Webhooks, so the agent need not wait.
	CallbackURL string `json:"callback_url,omitempty"`
	// Consensus says how several people decide; OnBehalfOf names the
	// person the agent asks for (see consensus.go). ClaimMode "exclusive"
	// refuses others' answers while someone has claimed it (claim.go).
	Consensus  *Consensus `json:"consensus,omitempty"`
	OnBehalfOf string     `json:"on_behalf_of,omitempty"`
	ClaimMode  ClaimMode  `json:"claim,omitempty"`
	// Escalation reminds or widens the targets at set times while the
	// question is pending (see escalation.go). Absent, the server's
	// default policy applies; an empty list opts out of it.
	Escalation []EscalationStep `json:"escalation,omitzero"`
}

// OptionList decodes options given either as objects {key,label,description}
// or as plain strings, whose key is derived from the label.
type OptionList []Option

// UnmarshalJSON accepts an array mixing strings and option objects.
func (l *OptionList) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("options must be an array of strings or {key,label,description} objects")
	}
	out := make(OptionList, 0, len(raw))
	for _, r := range raw {
		r = bytes.TrimSpace(r)
		if len(r) > 0 && r[0] == '"' {
			var s string
			if err := json.Unmarshal(r, &s); err != nil {
				return err
			}
			out = append(out, Option{Key: DeriveKey(s), Label: s})
			continue
		}
		var o Option
		if err := json.Unmarshal(r, &o); err != nil {
			return fmt.Errorf("options must be an array of strings or {key,label,description} objects")
		}
		out = append(out, o)
	}
	*l = out
	return nil
}

// nonKey matches what an option key leaves out (compiled when first used).
var nonKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^\p{L}\p{M}\p{N}]+`) })

// DeriveKey turns a label into a stable option key: lower case, runs of
// anything but letters and digits (in any script) become "_". A label with
// no letters or digits keeps its trimmed text as the key.
func DeriveKey(label string) string {
	k := strings.Trim(nonKey().ReplaceAllString(strings.ToLower(label), "_"), "_")
	if k == "" {
		return strings.TrimSpace(label)
	}
	return k
}

// NewInteraction validates req and returns the pending interaction it
// describes, created by caller at now. The ID is left for the caller to set.
// Times are kept to the millisecond, so they survive any store unchanged.
func NewInteraction(req CreateRequest, caller Caller, now time.Time) (*Interaction, error) {
	now = now.UTC().Truncate(time.Millisecond)
	in := &Interaction{
		Type:           req.Type,
		Question:       strings.TrimSpace(req.Question),
		Context:        req.Context,
		Options:        append([]Option(nil), req.Options...),
		OnTimeout:      req.OnTimeout,
		IdempotencyKey: req.IdempotencyKey,
		SourceAgent:    req.SourceAgent,
		SessionID:      req.SessionID,
		CreatedBy:      caller.Name,
		CreatedVia:     caller.Channel,
		CreatedAt:      now,
		Status:         StatusPending,
	}
	if in.Type == "" {
		in.Type = TypeFreeText
	}
	if !in.Type.Valid() {
		return nil, Errorf(EINVALID, "interaction_type must be one of approval, single_choice, multi_choice, form, free_text, action, handoff; got %q", req.Type)
	}
	if err := in.setAction(req); err != nil {
		return nil, err
	}
	if in.Question == "" {
		return nil, Errorf(EINVALID, "question is required")
	}
	if err := in.checkText(); err != nil {
		return nil, err
	}
	switch in.OnTimeout {
	case "":
		in.OnTimeout = OnTimeoutCancel
	case OnTimeoutCancel, OnTimeoutDefault:
	default:
		return nil, Errorf(EINVALID, "on_timeout must be cancel or default; got %q", req.OnTimeout)
	}
	if err := in.normalizeOptions(); err != nil {
		return nil, err
	}
	if err := in.setMetadata(req.Metadata); err != nil {
		return nil, err
	}
	if err := in.setSchema(req.FormSchema); err != nil {
		return nil, err
	}
	if err := in.setDefault(req.DefaultResponse); err != nil {
		return nil, err
	}
	if err := in.setDeadline(req, now); err != nil {
		return nil, err
	}
	if err := in.setTargets(req.Targets); err != nil {
		return nil, err
	}
	if err := in.setConsensus(req.Consensus, req.OnBehalfOf); err != nil {
		return nil, err
	}
	if err := in.setClaimMode(req.ClaimMode); err != nil {
		return nil, err
	}
	if err := in.setEscalation(req.Escalation); err != nil {
		return nil, err
	}
	notify, err := normalizeNotify(req.Notify)
	if err != nil {
		return nil, err
	}
	in.Notify = notify
	if in.CallbackURL, err = checkCallbackURL(req.CallbackURL); err != nil {
		return nil, err
	}
	in.RequestHash = in.fingerprint()
	return in, nil
}

// checkText checks the interaction's text fields against their limits.
func (in *Interaction) checkText() error {
	for _, f := range []struct {
		name, value string
		max         int
	}{
		{"question", in.Question, MaxQuestionLen},
		{"context", in.Context, MaxContextLen},
		{"idempotency_key", in.IdempotencyKey, MaxKeyLen},
		{"source_agent", in.SourceAgent, MaxProvenanceLen},
		{"session_id", in.SessionID, MaxProvenanceLen},
	} {
		if err := checkText(f.name, f.value, f.max); err != nil {
			return err
		}
	}
	return nil
}

// checkText checks a text field: at most max bytes, and text every store
// can hold (see validText).
func checkText(name, value string, max int) error {
	if len(value) > max {
		return Errorf(EINVALID, "%s is limited to %d bytes; got %d", name, max, len(value))
	}
	if !validText(value) {
		return Errorf(EINVALID, "%s must be valid UTF-8 without NUL bytes", name)
	}
	return nil
}

// setMetadata keeps m as it reads back from JSON (numbers as float64): a
// copy that shares nothing with the caller's request and equals what any
// store returns.
func (in *Interaction) setMetadata(m map[string]any) error {
	if m == nil {
		return nil
	}
	b, err := json.Marshal(m)
	if err == nil && len(b) > MaxMetadataLen {
		return Errorf(EINVALID, "metadata is limited to %d bytes of JSON; got %d", MaxMetadataLen, len(b))
	}
	if err == nil {
		err = json.Unmarshal(b, &in.Metadata)
	}
	if err != nil {
		return Errorf(EINVALID, "metadata must be a JSON object: %v", err)
	}
	return nil
}

func (in *Interaction) normalizeOptions() error {
	switch in.Type {
	case TypeApproval:
		if len(in.Options) == 0 {
			in.Options = []Option{{Key: "approve", Label: "Approve"}, {Key: "reject", Label: "Reject"}}
		} else if len(in.Options) != 2 {
			return Errorf(EINVALID, "approval takes exactly two options (approve first, reject second); got %d", len(in.Options))
		}
	case TypeSingleChoice, TypeMultiChoice:
		if len(in.Options) == 0 {
			return Errorf(EINVALID, "%s needs at least one option", in.Type)
		}
	default:
		if len(in.Options) > 0 {
			return Errorf(EINVALID, "%s takes no options", in.Type)
		}
		in.Options = []Option{}
		return nil
	}
	if len(in.Options) > MaxOptions {
		return Errorf(EINVALID, "options: at most %d options; got %d", MaxOptions, len(in.Options))
	}
	seen := make(map[string]bool, len(in.Options))
	for i := range in.Options {
		o := &in.Options[i]
		o.Key = strings.TrimSpace(o.Key)
		if o.Key == "" && o.Label != "" {
			o.Key = DeriveKey(o.Label)
		}
		if o.Key == "" {
			return Errorf(EINVALID, "option %d needs a non-empty key", i)
		}
		if o.Label == "" {
			o.Label = o.Key
		}
		if !utf8.ValidString(o.Key) || !utf8.ValidString(o.Label) || !utf8.ValidString(o.Description) {
			return Errorf(EINVALID, "option %d must be valid UTF-8", i)
		}
		for _, f := range []struct {
			name, value string
			max         int
		}{{"key", o.Key, MaxKeyLen}, {"label", o.Label, MaxLabelLen}, {"description", o.Description, MaxDescriptionLen}} {
			if len(f.value) > f.max {
				return Errorf(EINVALID, "options[%d].%s is limited to %d bytes; got %d", i, f.name, f.max, len(f.value))
			}
		}
		if seen[o.Key] {
			return Errorf(EINVALID, "option keys must be unique; %q appears twice", o.Key)
		}
		seen[o.Key] = true
	}
	return nil
}

func (in *Interaction) setSchema(schema json.RawMessage) error {
	if isNull(schema) {
		if in.Type == TypeForm {
			return Errorf(EINVALID, "form needs a form_schema")
		}
		return nil
	}
	if in.Type != TypeForm {
		return Errorf(EINVALID, "form_schema is only for interaction_type form")
	}
	if _, err := CompileSchema(schema); err != nil {
		return err
	}
	in.FormSchema = compactJSON(schema)
	return nil
}

func (in *Interaction) setDefault(def json.RawMessage) error {
	if isNull(def) {
		if in.OnTimeout == OnTimeoutDefault {
			return Errorf(EINVALID, "on_timeout default needs a default_response")
		}
		return nil
	}
	v, err := NormalizeAnswer(in, def)
	if err != nil {
		return Errorf(EINVALID, "default_response: %s", ErrorMessage(err))
	}
	in.DefaultResponse = v
	return nil
}

func (in *Interaction) setDeadline(req CreateRequest, now time.Time) error {
	switch {
	case req.Deadline != nil:
		in.Deadline = req.Deadline.UTC()
	case req.Timeout < 0 || math.IsNaN(req.Timeout) || math.IsInf(req.Timeout, 0):
		return Errorf(EINVALID, "timeout must be a positive number of seconds")
	case req.Timeout > 0:
		if req.Timeout > MaxTimeout.Seconds() {
			return Errorf(EINVALID, "timeout is at most %d seconds", int(MaxTimeout.Seconds()))
		}
		in.Deadline = now.Add(time.Duration(req.Timeout * float64(time.Second))).UTC()
	default:
		in.Deadline = now.Add(DefaultTimeout).UTC()
	}
	// Truncate before checking, so a deadline less than a millisecond away
	// cannot become one that has already passed.
	in.Deadline = in.Deadline.Truncate(time.Millisecond)
	if !in.Deadline.After(now) {
		if req.Deadline != nil {
			return Errorf(EINVALID, "deadline must be in the future")
		}
		return Errorf(EINVALID, "timeout must be at least a millisecond")
	}
	if in.Deadline.Sub(now) > MaxTimeout {
		return Errorf(EINVALID, "deadline is at most %s away", MaxTimeout)
	}
	in.Timeout = in.Deadline.Sub(now).Seconds()
	return nil
}

// setTargets copies t with names trimmed. No targets means anyone may
// answer, so an empty name is refused rather than silently widening who
// may answer.
func (in *Interaction) setTargets(t *Targets) error {
	in.Targets = nil
	if t == nil || len(t.Users) == 0 && len(t.Groups) == 0 {
		return nil
	}
	clean := func(what string, names []string) ([]string, error) {
		if len(names) == 0 {
			return nil, nil
		}
		if len(names) > MaxTargets {
			return nil, Errorf(EINVALID, "targets: at most %d %ss; got %d", MaxTargets, what, len(names))
		}
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = strings.TrimSpace(n)
			if out[i] == "" {
				return nil, Errorf(EINVALID, "targets: %s %d is empty", what, i)
			}
			if err := checkText(fmt.Sprintf("targets.%ss[%d]", what, i), out[i], MaxNameLen); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	users, err := clean("user", t.Users)
	if err != nil {
		return err
	}
	groups, err := clean("group", t.Groups)
	if err != nil {
		return err
	}
	in.Targets = &Targets{Users: users, Groups: groups}
	return nil
}

// fingerprintV2 marks the fingerprints that cover the targets; those
// without it were made before, and a retry of such a question is compared
// without them (SameRequest).
const fingerprintV2 = "v2:"

// fingerprint hashes what makes two requests "the same question" for
// idempotency: everything the person sees and the answer depends on, and
// who may answer.
func (in *Interaction) fingerprint() string {
	var tg *Targets
	if !in.Targets.Untargeted() {
		tg = &Targets{Users: slices.Sorted(slices.Values(in.Targets.Users)), Groups: slices.Sorted(slices.Values(in.Targets.Groups))}
	}
	return fingerprintV2 + in.hash(tg)
}

// legacyFingerprint is the fingerprint without the targets.
func (in *Interaction) legacyFingerprint() string { return in.hash(nil) }

// SameRequest reports whether stored, the fingerprint of the interaction
// an earlier request with the same idempotency key made, is in's: the
// same question, for the same people. A fingerprint from before the
// targets were covered is compared without them.
func (in *Interaction) SameRequest(stored string) bool {
	if strings.HasPrefix(stored, fingerprintV2) {
		return stored == in.fingerprint()
	}
	return stored == in.legacyFingerprint()
}

// hash is the SHA-256 of the request's question, decision and targets tg
// (nil: none, as fingerprints before targets were covered).
func (in *Interaction) hash(tg *Targets) string {
	b, _ := json.Marshal(struct {
		T Type            `json:"t"`
		Q string          `json:"q"`
		C string          `json:"c"`
		O []Option        `json:"o"`
		S json.RawMessage `json:"s,omitempty"`
		D json.RawMessage `json:"d,omitempty"`
		P OnTimeout       `json:"p"`
		// An action's fields; absent for the other types, whose
		// fingerprints stay what they were before actions existed.
		A  *Action         `json:"a,omitempty"`
		AS json.RawMessage `json:"as,omitempty"`
		AD []Decision      `json:"ad,omitempty"`
		AR bool            `json:"ar,omitempty"`
		// Who decides, and how; absent when the first answer wins.
		CS *Consensus `json:"cs,omitempty"`
		OB string     `json:"ob,omitempty"`
		CM ClaimMode  `json:"cm,omitempty"`
		// Whom to remind or add, and when, as the request gave it (before
		// the server's default applies): absent when it named none, and
		// an empty list when it opted out of the default.
		ES []EscalationStep `json:"es,omitzero"`
		// Who may answer, sorted; absent when anyone may.
		TG *Targets `json:"tg,omitempty"`
	}{in.Type, in.Question, in.Context, in.Options, in.FormSchema, in.DefaultResponse, in.OnTimeout,
		in.Action, in.ArgsSchema, in.Decisions, in.RejectRequiresMessage, in.Consensus, in.OnBehalfOf, in.ClaimMode, in.Escalation, tg})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// validText reports whether s can be stored as text by every store: valid
// UTF-8 without NUL bytes (which PostgreSQL text cannot hold).
func validText(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

func isNull(b json.RawMessage) bool {
	b = trimJSONSpace(b)
	return len(b) == 0 || bytes.Equal(b, []byte("null"))
}

func compactJSON(b json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return b
	}
	return buf.Bytes()
}
