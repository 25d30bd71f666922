package agents

import (
	"encoding/json"
	"strings"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/tools"
)

// Copilot is GitHub Copilot CLI, through its preToolUse command hook
// (hitl hook copilot-cli, or hitl hook copilot), as Copilot CLI 1.0.102
// speaks it (the payloads are in testdata/copilot-cli, captured from it).
//
// Its input names the tool as the model called it (bash, create, edit,
// view, <server>-<tool> for an MCP server's tool), with the model's
// arguments as they are (a path may be relative to cwd), and no call id
// and no event name. Its output is {"permissionDecision": "allow" |
// "deny", "permissionDecisionReason", "modifiedArgs"}: a deny's reason
// reaches the model, modifiedArgs with allow runs the edited arguments.
// Headless, "ask" is a deny, so it cannot ask.
var Copilot = &Agent{
	Name:    "copilot-cli",
	Display: copilotDisplay,
	Event:   copilotEvent,
	parse:   copilotToolCall,
	output:  copilotOutput,
}

// Copilot CLI's name for a person, and the hook event hitl answers.
const (
	copilotDisplay = "Copilot CLI"
	copilotEvent   = "preToolUse"
)

// copilotInput is what Copilot CLI sends a preToolUse hook (timestamp too,
// not needed).
type copilotInput struct {
	SessionID string          `json:"sessionId"`
	Cwd       string          `json:"cwd"`
	ToolName  *string         `json:"toolName"`
	ToolArgs  json.RawMessage `json:"toolArgs"`
}

// copilotToolCall reads a Copilot CLI preToolUse hook's input.
func copilotToolCall(data []byte) (tools.ToolCall, error) {
	var in copilotInput
	if err := object(data, &in, copilotDisplay); err != nil {
		return tools.ToolCall{}, err
	}
	if in.ToolName == nil || in.ToolArgs == nil {
		return tools.ToolCall{}, hitl.Errorf(hitl.EINVALID, "the hook input has no toolName or toolArgs; run this as %s's %s hook, which sends them", copilotDisplay, copilotEvent)
	}
	args := in.ToolArgs
	// toolArgs may come as a string holding the JSON object.
	var s string
	if json.Unmarshal(args, &s) == nil && json.Valid([]byte(s)) {
		args = json.RawMessage(s)
	}
	call := tools.ToolCall{
		Agent:     copilotDisplay,
		Tool:      *in.ToolName,
		Input:     args,
		SessionID: in.SessionID,
		Cwd:       in.Cwd,
		CallKey:   tools.InputKey(*in.ToolName, args), // Copilot CLI gives no call id
		Via:       copilotEvent + " hook",
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(args, &fields) == nil {
		call.Kind, call.KindInput = copilotKind(*in.ToolName, args, fields, in.Cwd)
	}
	return call, nil
}

// copilotTools are Copilot CLI's own tools, none of them an MCP server's.
var copilotTools = map[string]bool{
	"bash": true, "read_bash": true, "stop_bash": true, "list_bash": true, "write_bash": true,
	"view": true, "create": true, "edit": true, "grep": true, "glob": true,
	"fetch_copilot_cli_documentation": true, "skill": true, "sql": true, "session_store_sql": true,
	"read_agent": true, "list_agents": true, "write_agent": true, "task": true,
}

// copilotKind returns the kind of a Copilot CLI tool call and its input in
// that kind's terms (see hitl.Kinds), or "" and nil for a call of no kind.
// fields is the call's input args, decoded.
func copilotKind(tool string, args json.RawMessage, fields map[string]json.RawMessage, cwd string) (string, json.RawMessage) {
	str := func(k string) (string, bool) {
		var s string
		return s, json.Unmarshal(fields[k], &s) == nil
	}
	switch tool {
	case "bash":
		if cmd, ok := str("command"); ok {
			return hitl.KindShell, hitl.ShellInput(cmd, cwd)
		}
	case "create":
		p, ok := str("path")
		content, _ := str("file_text")
		if ok {
			return hitl.KindFileWrite, hitl.FileWriteInput(absPath(p, cwd), content)
		}
	case "edit":
		p, ok := str("path")
		old, _ := str("old_str")
		new, _ := str("new_str")
		if ok {
			return hitl.KindFileEdit, hitl.FileEditInput(absPath(p, cwd), old, new)
		}
	case "view":
		if p, ok := str("path"); ok {
			return hitl.KindFileRead, hitl.FileReadInput(absPath(p, cwd))
		}
	}
	// An MCP server's tool is <server>-<tool>, and nothing else names the
	// server: only a name with one dash says which is which, so that a
	// rule on one server's tool never decides another's.
	if server, name, ok := strings.Cut(tool, "-"); ok && !copilotTools[tool] && server != "" && name != "" && !strings.Contains(name, "-") {
		return hitl.KindMCP, hitl.MCPInput(server, name, args)
	}
	return "", nil
}

// copilotOutput renders v as a preToolUse hook's answer.
func copilotOutput(v *tools.Verdict, _ tools.OnError) []byte {
	out := struct {
		PermissionDecision       string          `json:"permissionDecision"`
		PermissionDecisionReason string          `json:"permissionDecisionReason,omitempty"`
		ModifiedArgs             json.RawMessage `json:"modifiedArgs,omitempty"`
	}{PermissionDecision: "deny", PermissionDecisionReason: v.Reason}
	if v.Allow {
		out.PermissionDecision, out.PermissionDecisionReason, out.ModifiedArgs = "allow", "", v.UpdatedInput
	}
	if out.PermissionDecision == "deny" && out.PermissionDecisionReason == "" {
		out.PermissionDecisionReason = "Denied in hitl."
	}
	return marshal(out)
}
