package agents

import (
	"encoding/json"
	"strings"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/tools"
)

// Cline is the Cline CLI, through a PreToolUse hook file (hitl hook
// cline), as Cline 3.0.65 (npm cline, @cline/core) runs it: read from its
// source and confirmed against the real CLI (cmd/hitl/hookcline_test.go). A file named PreToolUse in ~/.cline/hooks,
// ~/Documents/Cline/Hooks, <project>/.clinerules/hooks or
// <project>/.cline/hooks is run (by its #! line) for every tool call with
// JSON on stdin: taskId, hookName "tool_call", tool_call {id, name,
// input} and preToolUse {toolName, parameters, each a string}.
//
// Cline reads the last line of stdout starting HOOK_CONTROL<tab>, or all
// of it, as JSON, and ignores the exit status. {"cancel": true,
// "errorMessage"} ends the whole task, the tool not run, the message
// shown to the user, not the model; "overrideInput" runs the call with
// that input; anything else, unreadable output, a crash or outliving 120
// s runs the call. So a deny, and every failure, is a cancel.
var Cline = &Agent{
	Name:    "cline",
	Display: clineDisplay,
	Event:   clineEvent,
	parse:   clineToolCall,
	output:  clineOutput,
}

// Cline's name for a person, and the hook hitl answers.
const (
	clineDisplay = "Cline"
	clineEvent   = "PreToolUse"
)

// ClineHookTimeout is how long Cline waits for a PreToolUse hook before
// it runs the call (its toolCallTimeoutMs default; hook files cannot
// change it).
const ClineHookTimeout = 120

// clineInput is what Cline sends a PreToolUse hook (clineVersion,
// timestamp, workspaceInfo, userId and the agent ids too, not needed).
type clineInput struct {
	TaskID         string   `json:"taskId"`
	HookName       string   `json:"hookName"`
	WorkspaceRoots []string `json:"workspaceRoots"`
	ToolCall       *struct {
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"tool_call"`
}

// clineToolCall reads a Cline PreToolUse hook's input.
func clineToolCall(data []byte) (tools.ToolCall, error) {
	var in clineInput
	if err := object(data, &in, clineDisplay); err != nil {
		return tools.ToolCall{}, err
	}
	if in.HookName != "tool_call" || in.ToolCall == nil {
		return tools.ToolCall{}, hitl.Errorf(hitl.EINVALID, "the hook input is not a tool call (hookName %q); install this as Cline's %s hook", in.HookName, clineEvent)
	}
	cwd := ""
	if len(in.WorkspaceRoots) > 0 {
		cwd = in.WorkspaceRoots[0]
	}
	call := tools.ToolCall{
		Agent:     clineDisplay,
		Tool:      in.ToolCall.Name,
		Input:     in.ToolCall.Input,
		ToolUseID: in.ToolCall.ID,
		SessionID: in.TaskID,
		Cwd:       cwd,
		Via:       clineEvent + " hook",
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(in.ToolCall.Input, &fields) == nil && fields != nil {
		call.Kind, call.KindInput = clineKind(in.ToolCall.Name, in.ToolCall.Input, fields, cwd)
	}
	return call, nil
}

// clineTools are Cline's own tools, none of them an MCP server's.
var clineTools = map[string]bool{"run_commands": true, "read_files": true, "editor": true, "apply_patch": true, "fetch_web_content": true}

// clineKind returns the kind of a Cline tool call and its input in that
// kind's terms, or "" and nil. A call of several commands, files or URLs
// has no kind, so that a rule on one never decides another.
func clineKind(tool string, input json.RawMessage, fields map[string]json.RawMessage, cwd string) (string, json.RawMessage) {
	switch tool {
	case "run_commands":
		var cmds []json.RawMessage
		if json.Unmarshal(fields["commands"], &cmds) == nil && len(cmds) == 1 {
			var s string
			var c struct {
				Command string   `json:"command"`
				Args    []string `json:"args"`
			}
			switch {
			case json.Unmarshal(cmds[0], &s) == nil:
				return hitl.KindShell, hitl.ShellInput(s, cwd)
			case json.Unmarshal(cmds[0], &c) == nil && c.Command != "":
				return hitl.KindShell, hitl.ShellInput(strings.Join(append([]string{c.Command}, c.Args...), " "), cwd)
			}
		}
	case "editor":
		var e struct {
			Path       string  `json:"path"`
			OldText    *string `json:"old_text"`
			NewText    string  `json:"new_text"`
			InsertLine *int    `json:"insert_line"`
		}
		if json.Unmarshal(input, &e) != nil || e.Path == "" || e.InsertLine != nil {
			return "", nil
		}
		if e.OldText == nil {
			return hitl.KindFileWrite, hitl.FileWriteInput(absPath(e.Path, cwd), e.NewText)
		}
		return hitl.KindFileEdit, hitl.FileEditInput(absPath(e.Path, cwd), *e.OldText, e.NewText)
	case "apply_patch":
		var patch string
		if json.Unmarshal(fields["input"], &patch) == nil {
			return patchKind(patch, cwd)
		}
	case "read_files":
		var files []struct {
			Path string `json:"path"`
		}
		if json.Unmarshal(fields["files"], &files) == nil && len(files) == 1 && files[0].Path != "" {
			return hitl.KindFileRead, hitl.FileReadInput(absPath(files[0].Path, cwd))
		}
	case "fetch_web_content":
		var reqs []struct {
			URL string `json:"url"`
		}
		if json.Unmarshal(fields["requests"], &reqs) == nil && len(reqs) == 1 && reqs[0].URL != "" {
			return hitl.KindWebFetch, hitl.WebFetchInput(reqs[0].URL)
		}
	}
	// An MCP server's tool is <server>__<tool>; only a name with one "__"
	// says which is which.
	if server, name, ok := strings.Cut(tool, "__"); ok && !clineTools[tool] && server != "" && name != "" && !strings.Contains(name, "__") {
		return hitl.KindMCP, hitl.MCPInput(server, name, input)
	}
	return "", nil
}

// clineOutput renders v as a PreToolUse hook's answer: a cancel, which
// ends the task, for anything but an allow.
func clineOutput(v *tools.Verdict, _ tools.OnError) []byte {
	if v.Allow {
		return marshal(struct {
			Cancel        bool            `json:"cancel"`
			OverrideInput json.RawMessage `json:"overrideInput,omitempty"`
		}{false, v.UpdatedInput})
	}
	reason := v.Reason
	if reason == "" {
		reason = "Denied in hitl."
	}
	return marshal(struct {
		Cancel       bool   `json:"cancel"`
		ErrorMessage string `json:"errorMessage"`
	}{true, reason})
}
