package tools

import (
	"encoding/json"
	"strings"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/ask"
)

// PermissionPromptRequest returns the question a call of permission_prompt
// asks, with the raw JSON arguments Claude Code sent (toolUseID, from the
// call's _meta, stands in for a missing tool_use_id): the question
// CallPermissionPrompt asks, for a caller that creates it now and collects
// the decision later with PermissionPromptOutcome (an MCP task).
func PermissionPromptRequest(args json.RawMessage, toolUseID string, opts *ReviewOptions) (hitl.CreateRequest, error) {
	var a PermissionPromptArgs
	if err := json.Unmarshal(args, &a); err != nil {
		return hitl.CreateRequest{}, hitl.Errorf(hitl.EINVALID, "the permission prompt's arguments are not {tool_name, input, tool_use_id}: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if a.ToolUseID == "" {
		a.ToolUseID = toolUseID
	}
	input := a.Input
	if isNullJSON(input) {
		input = json.RawMessage("{}")
	}
	o := reviewDefaults(opts)
	call := ToolCall{Tool: a.ToolName, Input: input, ToolUseID: a.ToolUseID, Via: "permission prompt"}
	return call.request(o.SourceAgent, o.Timeout)
}

// PermissionPromptOutcome returns the decision on a permission prompt's
// question as it ended (in), or the deny for err when it could not be
// asked or read: what CallPermissionPrompt would have returned. A question
// that is not a permission prompt's action, or is still pending, is a
// deny, never an allow.
func PermissionPromptOutcome(in *hitl.Interaction, err error) PermissionDecision {
	var call ToolCall
	var input json.RawMessage
	if in != nil && in.Action != nil {
		call.Tool, input = in.Action.Name, in.Action.Args
		if isNullJSON(input) {
			input = json.RawMessage("{}")
		}
	}
	if err == nil && in == nil {
		err = hitl.Errorf(hitl.EINTERNAL, "no question")
	}
	if err == nil {
		err = ask.Outcome(in)
	}
	if err == nil {
		err = call.asked(in)
	}
	if err != nil {
		return permissionDecision(call.failed(in, err), input)
	}
	return permissionDecision(call.decided(in), input)
}
