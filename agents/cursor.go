package agents

import (
	"encoding/json"
	"fmt"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/tools"
)

// Cursor is the Cursor editor's agent, through its beforeShellExecution,
// beforeMCPExecution and beforeReadFile command hooks (hitl hook cursor:
// one command for all three, told apart by hook_event_name), as Cursor's
// documentation describes them: Cursor is not in a package registry, and
// the payloads in testdata/cursor are written from that documentation,
// not captured.
//
// Its input carries conversation_id and workspace_roots, and per event:
// command and cwd; tool_name, tool_input (a JSON string or an object) and
// url or command naming the MCP server; file_path, content and
// attachments. Its output is {"permission": "allow" | "deny" | "ask",
// "user_message", "agent_message"}: a deny's agent_message reaches the
// model, "ask" leaves the call to Cursor's own prompt. It cannot change a
// call, so a call the person edited is denied, with the edited input in
// the reason.
var Cursor = &Agent{
	Name:    "cursor",
	Display: cursorDisplay,
	Event:   cursorShell + ", " + cursorMCP + ", " + cursorRead,
	CanAsk:  true,
	parse:   cursorToolCall,
	output:  cursorOutput,
}

// Cursor's name for a person, and the hook events hitl answers.
const (
	cursorDisplay = "Cursor"
	cursorShell   = "beforeShellExecution"
	cursorMCP     = "beforeMCPExecution"
	cursorRead    = "beforeReadFile"
)

// CursorEvents are the hook events hitl hook cursor answers.
var CursorEvents = []string{cursorShell, cursorMCP, cursorRead}

// cursorInput is what Cursor sends its before* hooks (generation_id,
// model, cursor_version and user_email too, not needed). content, the
// file's whole content on beforeReadFile, is not read: the person decides
// on the path.
type cursorInput struct {
	HookEventName  string          `json:"hook_event_name"`
	ConversationID string          `json:"conversation_id"`
	WorkspaceRoots []string        `json:"workspace_roots"`
	Command        *string         `json:"command"`
	Cwd            string          `json:"cwd"`
	ToolName       *string         `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	URL            string          `json:"url"`
	FilePath       *string         `json:"file_path"`
	Attachments    json.RawMessage `json:"attachments"`
}

// cursorToolCall reads the input of one of Cursor's before* hooks. The
// call's tool is Shell, the MCP tool's name, or Read; its input is what
// the person needs: the command and cwd; the tool's input; the path and
// the attachments (never the file's content).
func cursorToolCall(data []byte) (tools.ToolCall, error) {
	var in cursorInput
	if err := object(data, &in, cursorDisplay); err != nil {
		return tools.ToolCall{}, err
	}
	cwd := in.Cwd
	if cwd == "" && len(in.WorkspaceRoots) > 0 {
		cwd = in.WorkspaceRoots[0]
	}
	call := tools.ToolCall{
		Agent:     cursorDisplay,
		SessionID: in.ConversationID,
		Cwd:       cwd,
		Via:       in.HookEventName + " hook",
	}
	missing := func(fields string) error {
		return hitl.Errorf(hitl.EINVALID, "the %s hook input has no %s; run this as %s's %s hook, which sends them", in.HookEventName, fields, cursorDisplay, in.HookEventName)
	}
	switch in.HookEventName {
	case cursorShell:
		if in.Command == nil {
			return tools.ToolCall{}, missing("command")
		}
		call.Tool, call.Input = "Shell", hitl.ShellInput(*in.Command, in.Cwd)
		call.Kind, call.KindInput = hitl.KindShell, call.Input
	case cursorMCP:
		if in.ToolName == nil || in.ToolInput == nil {
			return tools.ToolCall{}, missing("tool_name or tool_input")
		}
		args := in.ToolInput
		// tool_input comes as a string holding the JSON object in some
		// versions, as the object in others.
		var s string
		if json.Unmarshal(args, &s) == nil && json.Valid([]byte(s)) {
			args = json.RawMessage(s)
		}
		call.Tool, call.Input = *in.ToolName, args
		server := in.URL
		if server == "" && in.Command != nil {
			server = *in.Command
		}
		var fields map[string]json.RawMessage
		if server != "" && *in.ToolName != "" && json.Unmarshal(args, &fields) == nil && fields != nil {
			call.Kind, call.KindInput = hitl.KindMCP, hitl.MCPInput(server, *in.ToolName, args)
		}
	case cursorRead:
		if in.FilePath == nil {
			return tools.ToolCall{}, missing("file_path")
		}
		input := struct {
			FilePath    string          `json:"file_path"`
			Attachments json.RawMessage `json:"attachments,omitempty"`
		}{*in.FilePath, in.Attachments}
		if b, err := json.Marshal(input); err == nil {
			call.Input = b
		} else {
			call.Input = hitl.FileReadInput(*in.FilePath) // attachments not JSON
		}
		call.Tool = "Read"
		call.Kind, call.KindInput = hitl.KindFileRead, hitl.FileReadInput(absPath(*in.FilePath, cwd))
	case "":
		return tools.ToolCall{}, hitl.Errorf(hitl.EINVALID, "the hook input has no hook_event_name")
	default:
		return tools.ToolCall{}, hitl.Errorf(hitl.EINVALID, "hitl answers Cursor's %s, %s and %s hooks, not %s: configure it under those", cursorShell, cursorMCP, cursorRead, in.HookEventName)
	}
	call.CallKey = tools.InputKey(call.Tool, call.Input) // Cursor gives no call id
	return call, nil
}

// cursorOutput renders v as the answer of one of Cursor's before* hooks.
func cursorOutput(v *tools.Verdict, onError tools.OnError) []byte {
	out := struct {
		Permission   string `json:"permission"`
		UserMessage  string `json:"user_message,omitempty"`
		AgentMessage string `json:"agent_message,omitempty"`
	}{Permission: "deny", UserMessage: v.Reason, AgentMessage: v.Reason}
	switch {
	case v.Allow && v.UpdatedInput != nil:
		reason := fmt.Sprintf("The call was edited in hitl, and Cursor cannot run an edited call, so it is denied; the edited input is %s.", clipText(string(v.UpdatedInput), 4<<10))
		out.UserMessage, out.AgentMessage = reason, reason
	case v.Allow:
		out = struct {
			Permission   string `json:"permission"`
			UserMessage  string `json:"user_message,omitempty"`
			AgentMessage string `json:"agent_message,omitempty"`
		}{Permission: "allow"}
	case v.Failed && onError == tools.OnErrorAsk:
		out.Permission, out.AgentMessage = "ask", ""
	}
	if out.Permission == "deny" && out.AgentMessage == "" {
		out.UserMessage, out.AgentMessage = "Denied in hitl.", "Denied in hitl."
	}
	return marshal(out)
}

// clipText returns s cut to at most n bytes, on a rune boundary, marked
// when cut.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
