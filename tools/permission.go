package tools

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/hitl-sh/hitl"
)

// PermissionPromptName is the name of the tool Claude Code calls, with
// --permission-prompt-tool mcp__hitl__permission_prompt, whenever it
// would ask the user for permission.
const PermissionPromptName = "permission_prompt"

// PermissionPromptMetaKey is the _meta key in which Claude Code also sends
// the tool_use id of the call it asks about.
const PermissionPromptMetaKey = "claudecode/toolUseId"

// PermissionPrompt returns the permission_prompt tool: Claude Code's
// --permission-prompt-tool, which asks a person in hitl whether a tool
// call may run. It is not one of the tools models are offered (see All):
// Claude Code calls it itself.
func PermissionPrompt() Tool {
	return Tool{
		Name:        PermissionPromptName,
		Title:       "Claude Code permission prompt",
		Description: permissionPromptDescription,
		InputSchema: json.RawMessage(permissionPromptInput),
	}
}

// PermissionPromptArgs are the arguments Claude Code calls the permission
// prompt tool with.
type PermissionPromptArgs struct {
	ToolName  string          `json:"tool_name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
}

// CallPermissionPrompt answers a call of the permission_prompt tool with
// the raw JSON arguments Claude Code sent (toolUseID, from the call's
// _meta, stands in for a missing tool_use_id): it reviews the call
// through svc and returns the decision, whose JSON is the tool's one text
// item, with the verdict. An allowed call always carries updatedInput
// (the proposed input when it was not edited); every failure is a deny.
func CallPermissionPrompt(ctx context.Context, svc hitl.Service, args json.RawMessage, toolUseID string, opts *ReviewOptions) (PermissionDecision, *Verdict) {
	var a PermissionPromptArgs
	if err := json.Unmarshal(args, &a); err != nil {
		v := ToolCall{}.failed(nil, hitl.Errorf(hitl.EINVALID, "the permission prompt's arguments are not {tool_name, input, tool_use_id}: %s", strings.TrimPrefix(err.Error(), "json: ")))
		return permissionDecision(v, nil), v
	}
	if a.ToolUseID == "" {
		a.ToolUseID = toolUseID
	}
	input := a.Input
	if isNullJSON(input) {
		input = json.RawMessage("{}")
	}
	call := ToolCall{Tool: a.ToolName, Input: input, ToolUseID: a.ToolUseID, Via: "permission prompt"}
	v := Review(ctx, svc, call, opts)
	return permissionDecision(v, input), v
}

// Text returns d as the permission prompt tool's text: its JSON.
func (d PermissionDecision) Text() string { return string(marshal(d)) }

const permissionPromptDescription = `Claude Code's permission prompt: asks a person in hitl whether Claude Code may run a tool call, and waits for the decision. Claude Code calls it itself when started with --permission-prompt-tool mcp__hitl__permission_prompt; a model should not call it (use ask_human to ask a person something).

The result is one text item holding JSON: {"behavior": "allow", "updatedInput": {…}} (run the call with this input: the proposed one, or the person's edit) or {"behavior": "deny", "message": "…"} (do not run it; the message says why, or is the person's reply). When hitl cannot decide (unreachable, nobody answered in time, cancelled), the call is denied.`

const permissionPromptInput = `{
  "type": "object",
  "properties": {
    "tool_name": {"type": "string", "description": "The tool Claude Code wants to run, such as Bash."},
    "input": {"type": "object", "description": "Its input, as Claude Code would run it."},
    "tool_use_id": {"type": "string", "description": "The model's tool_use id."}
  },
  "required": ["tool_name", "input"]
}`
