package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
)

// The Claude Code hook events hitl answers.
const (
	// HookPreToolUse runs before every tool call the hook's matcher
	// names, whatever Claude Code's own permission rules say.
	HookPreToolUse = "PreToolUse"
	// HookPermissionRequest runs when Claude Code would ask the user for
	// permission (in -p as well); its input has no tool_use_id.
	HookPermissionRequest = "PermissionRequest"
)

// OnError is what a hook answers when hitl cannot decide.
type OnError string

// What a hook answers when hitl cannot decide.
const (
	// OnErrorDeny denies the call, with the reason (the default).
	OnErrorDeny OnError = "deny"
	// OnErrorAsk leaves the call to Claude Code's own prompt: "ask" for a
	// PreToolUse hook, no decision for a PermissionRequest hook. In -p
	// there is nobody to ask, and Claude Code denies.
	OnErrorAsk OnError = "ask"
)

// Valid reports whether o is deny or ask.
func (o OnError) Valid() bool { return o == OnErrorDeny || o == OnErrorAsk }

// HookInput is what Claude Code sends a PreToolUse or PermissionRequest
// hook, on a command hook's stdin or as an HTTP hook's body (Claude Code
// sends more fields, such as prompt_id and permission_suggestions; they
// are not needed).
type HookInput struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	// ToolUseID is the model's tool_use id; PermissionRequest has none.
	ToolUseID string `json:"tool_use_id"`
}

// ParseHookInput reads a hook's input. It fails (code hitl.EINVALID) when
// data is not a JSON object; Supported then says whether hitl answers its
// event. Anything wrong with the call itself (no tool name, an input that
// is not an object) is left to Review, which denies it in the event's
// shape.
func ParseHookInput(data []byte) (*HookInput, error) {
	data = bytes.TrimSpace(data)
	var in HookInput
	if len(data) == 0 || data[0] != '{' {
		return nil, hitl.Errorf(hitl.EINVALID, "the hook input is not a JSON object; run this as a Claude Code hook, which sends one")
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, hitl.Errorf(hitl.EINVALID, "the hook input is not valid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return &in, nil
}

// Supported returns nil when hitl answers the input's event, PreToolUse or
// PermissionRequest, and otherwise an error (code hitl.EINVALID) saying
// so: no decision can be rendered for another event.
func (in *HookInput) Supported() error {
	switch in.HookEventName {
	case HookPreToolUse, HookPermissionRequest:
		return nil
	case "":
		return hitl.Errorf(hitl.EINVALID, "the hook input has no hook_event_name")
	}
	return hitl.Errorf(hitl.EINVALID, "hitl answers the PreToolUse and PermissionRequest hooks, not %s: configure it under one of those", in.HookEventName)
}

// ToolCall returns the call the hook asks about.
func (in *HookInput) ToolCall() ToolCall {
	return ToolCall{
		Tool:           in.ToolName,
		Input:          in.ToolInput,
		ToolUseID:      in.ToolUseID,
		SessionID:      in.SessionID,
		Cwd:            in.Cwd,
		PermissionMode: in.PermissionMode,
		Via:            in.HookEventName + " hook",
	}
}

// HookOptions configure Hook. The zero value (or nil) is usable.
type HookOptions struct {
	ReviewOptions
	// OnError is what to answer when hitl cannot decide; "" means
	// OnErrorDeny.
	OnError OnError
	// DeferAfter, when positive, makes a PreToolUse hook wait at most
	// this long and then answer "defer" (Claude Code in -p stops, and
	// -p --resume asks again): see ReviewDeferring.
	DeferAfter time.Duration
}

// Hook answers a PreToolUse or PermissionRequest hook of Claude Code whose
// input in has been parsed: it reviews the call through svc and returns
// the hook's output (JSON for stdout or the HTTP response) with the
// verdict.
func Hook(ctx context.Context, svc hitl.Service, in *HookInput, opts *HookOptions) ([]byte, *Verdict) {
	var o HookOptions
	if opts != nil {
		o = *opts
	}
	var v *Verdict
	if in.HookEventName == HookPreToolUse && o.DeferAfter > 0 {
		v = ReviewDeferring(ctx, svc, in.ToolCall(), &o.ReviewOptions, o.DeferAfter)
	} else {
		v = Review(ctx, svc, in.ToolCall(), &o.ReviewOptions)
	}
	return HookOutput(in.HookEventName, v, o.OnError), v
}

// preToolUseOutput is a PreToolUse hook's answer.
type preToolUseOutput struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision"`
	PermissionDecisionReason string          `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
}

// permissionRequestOutput is a PermissionRequest hook's answer.
type permissionRequestOutput struct {
	HookEventName string             `json:"hookEventName"`
	Decision      PermissionDecision `json:"decision"`
}

// HookOutput renders v as the answer of a hook for event (PreToolUse or
// PermissionRequest): allow, with updatedInput after an edit, or deny with
// the reason, which Claude Code hands the model; "defer" for PreToolUse
// when the question is still pending (Verdict.Deferred). When nobody decided and
// onError is OnErrorAsk, PreToolUse answers "ask" and PermissionRequest
// {} (no decision), leaving the call to Claude Code's own prompt.
func HookOutput(event string, v *Verdict, onError OnError) []byte {
	v = v.checked()
	var specific any
	switch event {
	case HookPermissionRequest:
		if v.Failed && onError == OnErrorAsk {
			return []byte("{}")
		}
		specific = permissionRequestOutput{HookEventName: event, Decision: permissionDecision(v, nil)}
	default:
		out := preToolUseOutput{HookEventName: HookPreToolUse, PermissionDecision: "deny", PermissionDecisionReason: v.Reason}
		switch {
		case v.Deferred:
			out.PermissionDecision = "defer"
		case v.Allow:
			out.PermissionDecision, out.UpdatedInput = "allow", v.UpdatedInput
		case v.Failed && onError == OnErrorAsk:
			out.PermissionDecision = "ask"
		}
		specific = out
	}
	return marshal(map[string]any{"hookSpecificOutput": specific})
}

// PermissionDecision is how Claude Code's PermissionRequest hooks and
// permission prompt tools answer: {"behavior": "allow", "updatedInput":
// {…}} or {"behavior": "deny", "message": "…"}.
type PermissionDecision struct {
	Behavior     string          `json:"behavior"`
	UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
	Message      string          `json:"message,omitempty"`
}

// checked returns v, or a deny in its place when its updated input is
// not a JSON object (a verdict must always encode).
func (v *Verdict) checked() *Verdict {
	if v.UpdatedInput == nil || json.Valid(v.UpdatedInput) && bytes.HasPrefix(bytes.TrimSpace(v.UpdatedInput), []byte("{")) {
		return v
	}
	return &Verdict{Failed: true, Reason: "hitl could not get a decision on this call, so it is denied: the edited input is not a JSON object.", Interaction: v.Interaction}
}

// permissionDecision renders v; an allowed call that was not edited gets
// input as its updatedInput (nil leaves it out: the call runs as
// proposed).
func permissionDecision(v *Verdict, input json.RawMessage) PermissionDecision {
	v = v.checked()
	if !v.Allow {
		return PermissionDecision{Behavior: "deny", Message: v.Reason}
	}
	d := PermissionDecision{Behavior: "allow", UpdatedInput: v.UpdatedInput}
	if d.UpdatedInput == nil {
		d.UpdatedInput = input
	}
	return d
}

// marshal encodes v as compact JSON, without HTML escaping (the reason is
// read by a model and a person, not a browser).
func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only values made here are encoded; none can fail.
		panic(fmt.Sprintf("tools: encode %T: %v", v, err))
	}
	return bytes.TrimSpace(buf.Bytes())
}
