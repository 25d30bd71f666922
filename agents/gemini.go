package agents

import (
	"encoding/json"
	"regexp"
	"sync"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/tools"
)

// Gemini is Google's Gemini CLI, through its BeforeTool command hook
// (hitl hook gemini-cli), as Gemini CLI 0.61.0 speaks it (the payloads are
// in testdata/gemini-cli, captured from it).
//
// Its input names the tool as the model called it (run_shell_command,
// write_file, replace, read_file, web_fetch, mcp_<server>_<tool> with an
// mcp_context naming the server and tool), with the model's arguments as
// they are (paths relative to cwd), and no call id. Its output is
// {"decision": "allow" | "deny" | "ask", "reason", "hookSpecificOutput":
// {"tool_input"}}. "ask" hands the call to the CLI's own confirmation; a
// headless run (-p) has none, and ends at once without running the call.
var Gemini = &Agent{
	Name:    "gemini-cli",
	Display: geminiDisplay,
	Event:   geminiEvent,
	CanAsk:  true,
	parse:   geminiToolCall,
	output:  geminiOutput,
}

// Gemini CLI's name for a person, and the hook event hitl answers.
const (
	geminiDisplay = "Gemini CLI"
	geminiEvent   = "BeforeTool"
)

// geminiInput is what Gemini CLI sends a BeforeTool hook (transcript_path
// and timestamp too, not needed).
type geminiInput struct {
	SessionID     string          `json:"session_id"`
	Cwd           string          `json:"cwd"`
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
	MCPContext    *struct {
		ServerName string `json:"server_name"`
		ToolName   string `json:"tool_name"`
	} `json:"mcp_context"`
}

// geminiToolCall reads a Gemini CLI BeforeTool hook's input.
func geminiToolCall(data []byte) (tools.ToolCall, error) {
	var in geminiInput
	if err := object(data, &in, geminiDisplay); err != nil {
		return tools.ToolCall{}, err
	}
	if err := checkEvent(in.HookEventName, geminiEvent); err != nil {
		return tools.ToolCall{}, err
	}
	call := tools.ToolCall{
		Agent:     geminiDisplay,
		Tool:      in.ToolName,
		Input:     in.ToolInput,
		SessionID: in.SessionID,
		Cwd:       in.Cwd,
		CallKey:   tools.InputKey(in.ToolName, in.ToolInput), // Gemini CLI gives no call id
		Via:       in.HookEventName + " hook",
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(in.ToolInput, &fields) == nil {
		call.Kind, call.KindInput = geminiKind(in.ToolName, fields, in.Cwd)
		if in.MCPContext != nil && in.MCPContext.ServerName != "" && in.MCPContext.ToolName != "" {
			call.Kind, call.KindInput = hitl.KindMCP, hitl.MCPInput(in.MCPContext.ServerName, in.MCPContext.ToolName, in.ToolInput)
		}
		json.Unmarshal(fields["instruction"], &call.Reason) // replace says why
	}
	return call, nil
}

// geminiKind returns the kind of a Gemini CLI tool call and its input in
// that kind's terms (see hitl.Kinds), or "" and nil for a call of no kind.
// fields is the call's input, decoded.
func geminiKind(tool string, fields map[string]json.RawMessage, cwd string) (string, json.RawMessage) {
	str := func(k string) (string, bool) {
		var s string
		return s, json.Unmarshal(fields[k], &s) == nil
	}
	switch tool {
	case "run_shell_command":
		cmd, ok := str("command")
		if dir, given := str("dir_path"); given && dir != "" {
			cwd = absPath(dir, cwd)
		}
		if ok {
			return hitl.KindShell, hitl.ShellInput(cmd, cwd)
		}
	case "write_file":
		p, ok := str("file_path")
		content, _ := str("content")
		if ok {
			return hitl.KindFileWrite, hitl.FileWriteInput(absPath(p, cwd), content)
		}
	case "replace":
		p, ok := str("file_path")
		old, _ := str("old_string")
		new, _ := str("new_string")
		if ok {
			return hitl.KindFileEdit, hitl.FileEditInput(absPath(p, cwd), old, new)
		}
	case "read_file":
		if p, ok := str("file_path"); ok {
			return hitl.KindFileRead, hitl.FileReadInput(absPath(p, cwd))
		}
	case "web_fetch":
		// The tool takes a prompt naming up to 20 URLs: a call is a
		// web.fetch only when it names one, so that a rule on one URL
		// never decides a fetch of another.
		prompt, _ := str("prompt")
		if urls := urlPattern().FindAllString(prompt, -1); len(urls) == 1 {
			return hitl.KindWebFetch, hitl.WebFetchInput(urls[0])
		}
	}
	return "", nil
}

// urlPattern finds the URLs in a web_fetch prompt: http:// or https://
// up to white space.
var urlPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`https?://[^\s]+`) })

// geminiOutput renders v as a BeforeTool hook's answer.
func geminiOutput(v *tools.Verdict, onError tools.OnError) []byte {
	type specific struct {
		HookEventName string          `json:"hookEventName"`
		ToolInput     json.RawMessage `json:"tool_input"`
	}
	out := struct {
		Decision           string    `json:"decision"`
		Reason             string    `json:"reason,omitempty"`
		SystemMessage      string    `json:"systemMessage,omitempty"`
		HookSpecificOutput *specific `json:"hookSpecificOutput,omitempty"`
	}{Decision: "deny", Reason: v.Reason}
	switch {
	case v.Allow:
		out.Decision, out.Reason = "allow", ""
		if v.UpdatedInput != nil {
			out.HookSpecificOutput = &specific{HookEventName: geminiEvent, ToolInput: v.UpdatedInput}
		}
	case v.Failed && onError == tools.OnErrorAsk:
		out.Decision, out.SystemMessage = "ask", v.Reason
	}
	return marshal(out)
}
