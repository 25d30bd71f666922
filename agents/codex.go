package agents

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/tools"
)

// Codex is OpenAI's Codex CLI, through its PreToolUse command hook
// (hitl hook codex), as Codex 0.169.0 speaks it (the payloads are in
// testdata/codex, captured from it).
//
// Its input names the tool as Codex does — Bash for a shell command
// (exec_command), apply_patch for a file change, mcp__<server>__<tool> for
// an MCP server's tool — with tool_input holding only what the hook may
// edit ({"command"} for the first two), and the model's call id as
// tool_use_id. Its output is Claude Code's PreToolUse shape. Codex
// ignores "ask" (the call runs), so it cannot ask.
var Codex = &Agent{
	Name:    "codex",
	Display: codexDisplay,
	Event:   tools.HookPreToolUse,
	parse:   codexToolCall,
	output: func(v *tools.Verdict, _ tools.OnError) []byte {
		return tools.HookOutput(tools.HookPreToolUse, v, tools.OnErrorDeny)
	},
}

// codexDisplay names Codex for a person.
const codexDisplay = "Codex"

// codexInput is what Codex sends a PreToolUse hook (transcript_path,
// turn_id and model too, not needed).
type codexInput struct {
	SessionID      string          `json:"session_id"`
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	PermissionMode string          `json:"permission_mode"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
}

// codexToolCall reads a Codex PreToolUse hook's input.
func codexToolCall(data []byte) (tools.ToolCall, error) {
	var in codexInput
	if err := object(data, &in, codexDisplay); err != nil {
		return tools.ToolCall{}, err
	}
	if err := checkEvent(in.HookEventName, tools.HookPreToolUse); err != nil {
		return tools.ToolCall{}, err
	}
	call := tools.ToolCall{
		Agent:          codexDisplay,
		Tool:           in.ToolName,
		Input:          in.ToolInput,
		ToolUseID:      in.ToolUseID,
		SessionID:      in.SessionID,
		Cwd:            in.Cwd,
		PermissionMode: in.PermissionMode,
		Via:            in.HookEventName + " hook",
	}
	call.Kind, call.KindInput = codexKind(in.ToolName, in.ToolInput, in.Cwd)
	return call, nil
}

// codexKind returns the kind of a Codex tool call and its input in that
// kind's terms (see hitl.Kinds), or "" and nil for a call of no kind.
func codexKind(tool string, input json.RawMessage, cwd string) (string, json.RawMessage) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(input, &fields) != nil {
		return "", nil
	}
	var command string
	hasCommand := json.Unmarshal(fields["command"], &command) == nil
	switch {
	case tool == "Bash" && hasCommand:
		return hitl.KindShell, hitl.ShellInput(command, cwd)
	case tool == "apply_patch" && hasCommand:
		return patchKind(command, cwd)
	}
	if server, name, ok := strings.Cut(strings.TrimPrefix(tool, "mcp__"), "__"); ok && strings.HasPrefix(tool, "mcp__") && server != "" && name != "" {
		return hitl.KindMCP, hitl.MCPInput(server, name, input)
	}
	return "", nil
}

// patchKind returns the kind of an apply_patch call: a patch that adds one
// file is a file.write of its content, one that updates (or deletes) one
// file a file.edit with the patch as its diff. A patch that touches
// several files, or moves one, has no kind: a rule on one path must not
// decide a change to another, so only rules on apply_patch itself decide
// it, or a person.
func patchKind(patch, cwd string) (string, json.RawMessage) {
	type op struct{ verb, path string }
	var ops []op
	var added []string
	for _, line := range strings.Split(patch, "\n") {
		line = strings.TrimSuffix(line, "\r")
		verb, path, ok := patchHeader(line)
		switch {
		case ok:
			ops = append(ops, op{verb, path})
		case len(ops) > 0 && ops[len(ops)-1].verb == "Add" && strings.HasPrefix(line, "+"):
			added = append(added, line[1:])
		}
	}
	if len(ops) != 1 || ops[0].path == "" {
		return "", nil
	}
	path := absPath(ops[0].path, cwd)
	switch ops[0].verb {
	case "Add":
		content := ""
		if len(added) > 0 {
			content = strings.Join(added, "\n") + "\n"
		}
		return hitl.KindFileWrite, hitl.FileWriteInput(path, content)
	case "Update", "Delete":
		return hitl.KindFileEdit, hitl.FileDiffInput(path, patch)
	}
	return "", nil
}

// patchHeader reads a line of a patch that names a file: "*** Add File:
// p", "*** Update File: p", "*** Delete File: p" or "*** Move to: p".
func patchHeader(line string) (verb, path string, ok bool) {
	for _, h := range []struct{ prefix, verb string }{
		{"*** Add File: ", "Add"}, {"*** Update File: ", "Update"}, {"*** Delete File: ", "Delete"}, {"*** Move to: ", "Move"},
	} {
		if p, found := strings.CutPrefix(line, h.prefix); found {
			return h.verb, strings.TrimSpace(p), true
		}
	}
	return "", "", false
}

// absPath returns p, made absolute against the agent's working directory
// cwd when it is relative and cwd is known: the path the agent will touch.
func absPath(p, cwd string) string {
	if p == "" || filepath.IsAbs(p) || cwd == "" {
		return p
	}
	return filepath.Join(cwd, p)
}
