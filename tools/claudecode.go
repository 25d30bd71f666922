package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/ask"
)

// Claude Code asks hitl about its tool calls in three ways: a command hook
// (hitl hook claude-code), an HTTP hook (POST /api/v1/hooks/claude-code)
// and the permission_prompt MCP tool (--permission-prompt-tool). Each
// describes the call as a ToolCall, reviews it with Review, and renders the
// Verdict in the shape Claude Code reads. A verdict is never missing:
// every failure (hitl unreachable, the question expired or was cancelled,
// bad input) is a deny that says why.

// ClaudeCodeAgent is the source_agent of Claude Code's tool calls unless
// configured otherwise; it is also the name Claude Code gives itself as an
// MCP client, so rules made from either surface apply to both.
const ClaudeCodeAgent = "claude-code"

// DefaultReviewTimeout is how long a person has to decide on a tool call:
// below Claude Code's default hook timeout (600 s) by more than
// ReviewGrace, so a hook always answers before Claude Code gives up on it
// (a hook that times out is ignored, and the call runs).
const DefaultReviewTimeout = 540 * time.Second

// ReviewGrace is how long past the question's deadline Review waits for
// the server to report the outcome before it denies the call anyway.
const ReviewGrace = 30 * time.Second

// reviewGrace is ReviewGrace (a variable for tests).
var reviewGrace = ReviewGrace

// HookTimeoutMargin is how much longer than the review's timeout a
// Claude Code hook's own timeout should be: ReviewGrace, the few seconds
// a withdrawal takes, and room to spare.
const HookTimeoutMargin = 60 * time.Second

// ToolCall is a tool call a coding agent asks permission for: Claude
// Code's, or another agent's as its adapter reads it.
type ToolCall struct {
	// Agent names the agent for the person ("Codex"); "" is Claude Code.
	Agent string
	// Kind and Input are the call in every agent's terms (see hitl.Kinds),
	// as the agent's adapter reads them; "" for a tool of no kind. For
	// Claude Code (Agent "") they are read from Tool and Input when "".
	Kind      string
	KindInput json.RawMessage
	// Reason is why the model says it makes the call, when the agent
	// tells; shown to the person.
	Reason string
	// Tool is the tool's name: Bash, Write, mcp__github__create_issue, …
	Tool string
	// Input is the tool's input, a JSON object.
	Input json.RawMessage
	// ToolUseID is the model's tool_use id; "" when Claude Code gives none
	// (a PermissionRequest hook).
	ToolUseID string
	// CallKey, when set, identifies the call within its session instead
	// of ToolUseID (see InputKey: the tool and a hash of its input), so
	// that the same call asked again finds the same question, and its
	// answer: for an agent that gives no call id, or when a call the model
	// makes again (under a new id) must find the question still open.
	// "" for none.
	CallKey string
	// SessionID is Claude Code's session; "" when unknown (the permission
	// prompt tool is not told).
	SessionID string
	// Cwd is Claude Code's working directory, the project; "" when
	// unknown.
	Cwd string
	// PermissionMode is Claude Code's permission mode (default,
	// acceptEdits, plan, …); "" when unknown.
	PermissionMode string
	// Via names the surface that asks, for the person and the audit trail:
	// "PreToolUse hook", "PermissionRequest hook" or "permission prompt".
	Via string
	// Description says what the tool does, for the person (an MCP tool's
	// own description); "" to take the input's "description" field, as
	// Claude Code's Bash tool gives one.
	Description string
	// Details is more for the person to read about the call, Markdown,
	// after the context (an MCP tool's annotations); "" for none.
	Details string
	// Annotations are an MCP tool's annotations as its server gives them
	// (readOnlyHint, destructiveHint, …); nil for none. They are kept in
	// the action's metadata as "annotations", where risk marks a tool
	// its server calls destructive.
	Annotations map[string]any
}

// ReviewOptions configure Review. The zero value (or nil) is usable.
type ReviewOptions struct {
	// SourceAgent names the agent: rules are scoped to it. "" means
	// ClaudeCodeAgent.
	SourceAgent string
	// Timeout is how long the person has to decide; 0 means
	// DefaultReviewTimeout.
	Timeout time.Duration
}

// Verdict is hitl's answer to a tool call, in the terms every Claude Code
// surface renders.
type Verdict struct {
	// Allow reports that the call may run: approved, edited, or allowed
	// by a rule.
	Allow bool
	// UpdatedInput is the input the person edited the call to; nil when
	// it runs as proposed.
	UpdatedInput json.RawMessage
	// Reason says what was decided, and by whom: for the model when the
	// call is denied (it reads it), for the user when it is allowed.
	Reason string
	// Failed reports that nobody decided: hitl could not be reached, the
	// question expired or was cancelled, or the call could not be asked.
	// Allow is false and Reason says what went wrong.
	Failed bool
	// Deferred reports that nobody has decided yet and the question is
	// still pending (see ReviewDeferring): Allow is false, and Reason
	// says how to pick up the answer.
	Deferred bool
	// Interaction is the interaction as it ended; nil if none was made.
	Interaction *hitl.Interaction
	// Err is the underlying error of a failure, for logs.
	Err error
}

// Review asks a person, through svc, whether the agent may make call,
// waits for the decision, and returns it as a Verdict. It never fails: a
// call that cannot be decided is denied, with the reason. When ctx
// carries the caller's credential check (hitl.WithCredentialCheck, as a
// server's requests do), a caller whose credentials stop holding while
// it waits, or by the time a person's decision comes, is denied; a
// decision made as the call is asked (a rule's) comes within the request
// whose credentials were just checked, and is not checked again. It waits at most
// the timeout and ReviewGrace (and a few seconds to withdraw the question
// when ctx ends or the wait runs out).
func Review(ctx context.Context, svc hitl.Service, call ToolCall, opts *ReviewOptions) *Verdict {
	o := reviewDefaults(opts)
	req, err := call.request(o.SourceAgent, o.Timeout)
	if err != nil {
		return call.failed(nil, err)
	}
	// A caller whose credentials stop holding (a revoked token) gets no
	// decision: the wait ends, the question is withdrawn, the call denied.
	watched, stop := hitl.WatchCredentials(ctx)
	defer stop()
	wctx, cancel := context.WithTimeout(watched, o.Timeout+reviewGrace)
	defer cancel()
	in, waited, err := ask.AskWaited(wctx, svc, req)
	switch {
	case errors.Is(context.Cause(watched), hitl.ErrCredentialsEnded) || err == nil && waited && !hitl.CredentialsHold(ctx):
		return call.failed(in, hitl.ErrCredentialsEnded)
	case err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		err = hitl.Errorf(hitl.EUNAVAILABLE, "the hitl server reported no outcome %s after the question's deadline; it may have stopped", reviewGrace)
	}
	var other *ask.OtherInteractionError
	if errors.As(err, &other) {
		return call.failed(nil, untrusted("the hitl server answered with interaction %s, not %s", other.Got, other.Asked))
	}
	if err != nil {
		return call.failed(in, err)
	}
	if err := call.asked(in); err != nil {
		return call.failed(nil, err)
	}
	return call.decided(in)
}

// reviewDefaults returns opts with its defaults filled in.
func reviewDefaults(opts *ReviewOptions) ReviewOptions {
	var o ReviewOptions
	if opts != nil {
		o = *opts
	}
	if o.SourceAgent == "" {
		o.SourceAgent = ClaudeCodeAgent
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultReviewTimeout
	}
	return o
}

// asked returns nil when in is the question asked about c: an action
// named after c's tool. Anything else (a server that answers about
// another interaction) is an error: its decision is not about c.
func (c ToolCall) asked(in *hitl.Interaction) error {
	switch {
	case in == nil || in.ID == "":
		return untrusted("the hitl server answered without an interaction")
	case in.Type != hitl.TypeAction || in.Action == nil:
		return untrusted("the hitl server answered with interaction %s, which is not an action", in.ID)
	case in.Action.Name != c.Tool:
		return untrusted("the hitl server answered with interaction %s, about %s, not %s", in.ID, in.Action.Name, c.Tool)
	}
	return nil
}

// request returns the action question for call.
func (c ToolCall) request(agent string, timeout time.Duration) (hitl.CreateRequest, error) {
	if strings.TrimSpace(c.Tool) == "" {
		return hitl.CreateRequest{}, hitl.Errorf(hitl.EINVALID, "the tool call has no tool name")
	}
	input := c.Input
	if isNullJSON(input) {
		input = json.RawMessage("{}")
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(input, &fields) != nil || fields == nil {
		return hitl.CreateRequest{}, hitl.Errorf(hitl.EINVALID, "the tool call's input is not a JSON object")
	}
	action := &hitl.Action{Name: c.Tool, Args: input}
	action.Kind, action.Input = c.Kind, c.KindInput
	if c.Agent == "" && c.Kind == "" {
		action.Kind, action.Input = claudeKind(c.Tool, fields, c.Cwd)
	}
	desc := c.Description
	if desc == "" && json.Unmarshal(fields["description"], &desc) != nil {
		desc = ""
	}
	action.Description = clip(desc, hitl.MaxActionDescriptionLen)
	req := hitl.CreateRequest{
		Type:        hitl.TypeAction,
		Action:      action,
		Context:     c.context(),
		Timeout:     timeout.Seconds(),
		SourceAgent: agent,
		SessionID:   clip(c.SessionID, hitl.MaxProvenanceLen),
		Metadata:    c.metadata(),
	}
	switch {
	case c.CallKey != "":
		req.IdempotencyKey = idempotencyKey(c.agentKey(), c.SessionID, c.CallKey)
	case c.ToolUseID != "":
		req.IdempotencyKey = idempotencyKey(c.agentKey(), c.SessionID, c.ToolUseID)
	}
	return req, nil
}

// context is what the person reads about where the call comes from.
func (c ToolCall) context() string {
	var b strings.Builder
	b.WriteString(c.agentName() + " asks to run **")
	b.WriteString(escapeMarkdown(c.Tool))
	b.WriteString("**")
	if c.Cwd != "" {
		b.WriteString(" in ")
		b.WriteString(codeSpan(c.Cwd))
	}
	b.WriteString(".")
	var notes []string
	if c.SessionID != "" {
		notes = append(notes, "session "+codeSpan(c.SessionID))
	}
	if c.PermissionMode != "" {
		notes = append(notes, "permission mode "+codeSpan(c.PermissionMode))
	}
	if c.Via != "" {
		notes = append(notes, "asked by its "+c.Via)
	}
	if len(notes) > 0 {
		b.WriteString(" (" + strings.Join(notes, ", ") + ")")
	}
	if c.Reason != "" {
		b.WriteString("\n\nThe model's reason: " + escapeMarkdown(clip(c.Reason, 2<<10)))
	}
	if c.Details != "" {
		b.WriteString("\n\n" + clip(c.Details, 4<<10))
	}
	return b.String()
}

// agentName names the agent for the person.
func (c ToolCall) agentName() string {
	if c.Agent == "" {
		return "Claude Code"
	}
	return c.Agent
}

// agentKey names the agent in idempotency keys: "claude-code", or the
// agent's name in lower case with dashes.
func (c ToolCall) agentKey() string {
	if c.Agent == "" {
		return ClaudeCodeAgent
	}
	return strings.ToLower(strings.Join(strings.Fields(c.Agent), "-"))
}

// metadata records the call's provenance on the interaction.
func (c ToolCall) metadata() map[string]any {
	m := map[string]any{}
	for k, v := range map[string]string{"cwd": c.Cwd, "tool_use_id": c.ToolUseID, "permission_mode": c.PermissionMode, "via": c.Via} {
		if v != "" {
			m[k] = clip(v, 4<<10)
		}
	}
	if len(c.Annotations) > 0 {
		m["annotations"] = c.Annotations
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// idempotencyKey makes a retried hook or tool call (the same tool_use id
// in the same session of the same agent) find its question, and its
// answer, again.
func idempotencyKey(agent, session, toolUseID string) string {
	key := agent + ":" + toolUseID
	if session != "" {
		key = agent + ":" + session + ":" + toolUseID
	}
	if len(key) > hitl.MaxKeyLen {
		sum := sha256.Sum256([]byte(key))
		key = agent + ":" + hex.EncodeToString(sum[:])
	}
	return key
}

// decided renders the decision an answered action holds.
func (c ToolCall) decided(in *hitl.Interaction) *Verdict {
	var d struct {
		Decision hitl.Decision   `json:"decision"`
		Args     json.RawMessage `json:"args"`
		Message  string          `json:"message"`
	}
	if in.Result == nil || json.Unmarshal(in.Result.Value, &d) != nil {
		return c.failed(in, untrusted("interaction %s holds no decision", in.ID))
	}
	v := &Verdict{Interaction: in}
	who, rule := in.Result.RespondedBy, in.Result.RuleID
	if who == "" {
		who = "someone"
	}
	reviewer := fmt.Sprintf("The person reviewing this %s call in hitl (%s)", c.Tool, who)
	switch d.Decision {
	case hitl.DecisionApprove:
		v.Allow, v.Reason = true, "Approved in hitl by "+who+"."
		if rule != "" {
			v.Reason = "Allowed by hitl rule " + rule + "."
		}
	case hitl.DecisionEdit:
		if isNullJSON(d.Args) {
			return c.failed(in, untrusted("interaction %s holds an edit, but the edit carries no args", in.ID))
		}
		v.Allow, v.UpdatedInput = true, d.Args
		v.Reason = "Approved in hitl by " + who + ", with edited input."
	case hitl.DecisionReject:
		switch {
		case rule != "" && (d.Message == "" || d.Message == "denied by rule "+rule):
			v.Reason = fmt.Sprintf("A hitl rule (%s) denies this %s call.", rule, c.Tool)
		case rule != "":
			v.Reason = fmt.Sprintf("A hitl rule (%s) denies this %s call: %s", rule, c.Tool, d.Message)
		case d.Message == "":
			v.Reason = reviewer + " rejected it, without giving a reason."
		default:
			v.Reason = reviewer + " rejected it: " + d.Message
		}
	case hitl.DecisionRespond:
		v.Reason = reviewer + " did not let it run, and replied: " + d.Message
	default:
		return c.failed(in, untrusted("interaction %s holds an unknown decision %q", in.ID, d.Decision))
	}
	if in.Result.TimedOut {
		v.Reason = "Nobody answered in hitl before the deadline; the default applies. " + v.Reason
	}
	return v
}

// Refuse returns the verdict that denies c without asking anyone, because
// err (such as a hook configured with a timeout hitl cannot read) keeps
// hitl from asking: a deny that says why.
func (c ToolCall) Refuse(err error) *Verdict { return c.failed(nil, err) }

// untrustedAnswer is an answer from hitl that cannot be acted on: it is
// not about the call asked, or its decision is incomplete.
type untrustedAnswer struct{ err error }

func (e *untrustedAnswer) Error() string { return e.err.Error() }
func (e *untrustedAnswer) Unwrap() error { return e.err }

// untrusted returns an untrustedAnswer (code hitl.EINTERNAL) saying what
// is wrong with the answer.
func untrusted(format string, a ...any) error {
	return &untrustedAnswer{hitl.Errorf(hitl.EINTERNAL, format, a...)}
}

// failed denies the call because nobody decided, saying why.
func (c ToolCall) failed(in *hitl.Interaction, err error) *Verdict {
	tool := c.Tool
	if strings.TrimSpace(tool) == "" {
		tool = "tool"
	}
	return &Verdict{
		Failed:      true,
		Reason:      fmt.Sprintf("hitl could not get a decision on this %s call, so it is denied: %s", tool, problem(err)),
		Interaction: in,
		Err:         err,
	}
}

// problem says in a few words why no decision came.
func problem(err error) string {
	msg := hitl.ErrorMessage(err)
	var ua *untrustedAnswer
	switch code := hitl.ErrorCode(err); {
	case errors.As(err, &ua):
		return "its answer cannot be acted on (" + msg + ")."
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return "the review was interrupted before anyone answered; the question was withdrawn."
	case errors.Is(err, hitl.ErrUnreachable):
		return fmt.Sprintf("cannot reach the hitl server (%s). Start it with `hitl serve`, or point HITL_URL at it.", networkProblem(err))
	case code == hitl.EEXPIRED:
		return "nobody answered before the deadline."
	case code == hitl.ECANCELLED:
		return "the question was cancelled in hitl (" + msg + ")."
	case code == hitl.EUNAUTHORIZED || code == hitl.EFORBIDDEN:
		return "hitl refused the credentials (" + msg + "); set HITL_TOKEN to an agent token."
	case code == hitl.EINVALID || code == hitl.EVALUE:
		return "hitl refused the question (" + msg + ")."
	case code == hitl.EINTERNAL:
		return "internal error in hitl (see the hitl server's log)."
	}
	return msg + "."
}

// escapeMarkdown escapes the characters that would format s in Markdown.
func escapeMarkdown(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_{}[]()#+-.!<>|~", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// codeSpan returns s as a Markdown code span, fenced with more backticks
// than any run in s, on one line.
func codeSpan(s string) string {
	s = strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if longest > 0 || strings.HasPrefix(s, " ") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// isNullJSON reports whether raw is absent or JSON null.
func isNullJSON(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}

// clip returns s as valid UTF-8 without NUL bytes, shortened to at most n
// bytes without cutting a character: what Claude Code sends should not
// make its question fail for being longer than a field may be.
func clip(s string, n int) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
