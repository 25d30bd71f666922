package agents

import (
	_ "embed"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/tools"
)

// OpenCode is OpenCode (opencode-ai), through hitl's plugin (PluginSource,
// printed by hitl hook opencode --print-plugin), whose tool.execute.before
// runs hitl hook opencode with the call on its standard input, as
// OpenCode 1.18.33 calls it (the payloads are in testdata/opencode,
// captured from it). OpenCode has no command hooks.
//
// The input is the plugin's: {"tool", "sessionID", "callID", "cwd",
// "args"}, the tool named as the model called it (bash, write, edit, read,
// webfetch, <server>_<tool> for an MCP server's tool) with the model's
// arguments as they are (a path may be relative to cwd). The output is
// {"decision": "allow" | "deny", "reason", "args"}: the plugin throws the
// reason on a deny, which OpenCode hands the model, and runs args after
// an edit. The plugin cannot ask.
var OpenCode = &Agent{
	Name:    "opencode",
	Display: openCodeDisplay,
	Event:   openCodeEvent,
	parse:   openCodeToolCall,
	output:  openCodeOutput,
}

// OpenCode's name for a person, and the plugin hook hitl answers.
const (
	openCodeDisplay = "OpenCode"
	openCodeEvent   = "tool.execute.before"
)

// OpenCodeMatcher names the tools whose calls the printed plugin sends
// for review unless told otherwise, a JavaScript regular expression: those
// that run commands or change files.
const OpenCodeMatcher = "^(bash|edit|write)$"

// openCodeInput is what the plugin sends.
type openCodeInput struct {
	Tool      *string         `json:"tool"`
	SessionID string          `json:"sessionID"`
	CallID    string          `json:"callID"`
	Cwd       string          `json:"cwd"`
	Args      json.RawMessage `json:"args"`
}

// openCodeToolCall reads the plugin's input.
func openCodeToolCall(data []byte) (tools.ToolCall, error) {
	var in openCodeInput
	if err := object(data, &in, openCodeDisplay+" plugin"); err != nil {
		return tools.ToolCall{}, err
	}
	if in.Tool == nil || in.Args == nil {
		return tools.ToolCall{}, hitl.Errorf(hitl.EINVALID, "the input has no tool or args; run this from hitl's OpenCode plugin (hitl hook opencode --print-plugin), which sends them")
	}
	call := tools.ToolCall{
		Agent:     openCodeDisplay,
		Tool:      *in.Tool,
		Input:     in.Args,
		ToolUseID: in.CallID,
		SessionID: in.SessionID,
		Cwd:       in.Cwd,
		Via:       openCodeEvent + " plugin",
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(in.Args, &fields) == nil {
		call.Kind, call.KindInput = openCodeKind(*in.Tool, in.Args, fields, in.Cwd)
	}
	return call, nil
}

// openCodeTools are OpenCode's own tools, none of them an MCP server's.
var openCodeTools = map[string]bool{
	"bash": true, "edit": true, "write": true, "read": true, "glob": true, "grep": true, "list": true,
	"patch": true, "webfetch": true, "websearch": true, "codesearch": true, "todowrite": true, "todoread": true,
	"task": true, "skill": true, "invalid": true, "lsp": true, "question": true, "multiedit": true,
}

// openCodeKind returns the kind of an OpenCode tool call and its input in
// that kind's terms (see hitl.Kinds), or "" and nil for a call of no kind.
// fields is the call's input args, decoded.
func openCodeKind(tool string, args json.RawMessage, fields map[string]json.RawMessage, cwd string) (string, json.RawMessage) {
	str := func(k string) (string, bool) {
		var s string
		return s, json.Unmarshal(fields[k], &s) == nil
	}
	switch tool {
	case "bash":
		cmd, ok := str("command")
		if dir, given := str("workdir"); given && dir != "" {
			cwd = absPath(dir, cwd)
		}
		if ok {
			return hitl.KindShell, hitl.ShellInput(cmd, cwd)
		}
	case "write":
		p, ok := str("filePath")
		content, _ := str("content")
		if ok {
			return hitl.KindFileWrite, hitl.FileWriteInput(absPath(p, cwd), content)
		}
	case "edit":
		p, ok := str("filePath")
		old, _ := str("oldString")
		new, _ := str("newString")
		var all bool
		json.Unmarshal(fields["replaceAll"], &all)
		// Every occurrence replaced is not the one edit a file.edit is.
		if ok && !all {
			return hitl.KindFileEdit, hitl.FileEditInput(absPath(p, cwd), old, new)
		}
	case "read":
		if p, ok := str("filePath"); ok {
			return hitl.KindFileRead, hitl.FileReadInput(absPath(p, cwd))
		}
	case "webfetch":
		if u, ok := str("url"); ok {
			return hitl.KindWebFetch, hitl.WebFetchInput(u)
		}
	}
	// An MCP server's tool is <server>_<tool>, and nothing else names the
	// server: only a name with one underscore says which is which, so that
	// a rule on one server's tool never decides another's.
	if server, name, ok := strings.Cut(tool, "_"); ok && !openCodeTools[tool] && server != "" && name != "" && !strings.Contains(name, "_") {
		return hitl.KindMCP, hitl.MCPInput(server, name, args)
	}
	return "", nil
}

// openCodeOutput renders v as the plugin reads it.
func openCodeOutput(v *tools.Verdict, _ tools.OnError) []byte {
	out := struct {
		Decision string          `json:"decision"`
		Reason   string          `json:"reason,omitempty"`
		Args     json.RawMessage `json:"args,omitempty"`
	}{Decision: "deny", Reason: v.Reason}
	if v.Allow {
		out.Decision, out.Reason, out.Args = "allow", "", v.UpdatedInput
	}
	if out.Decision == "deny" && out.Reason == "" {
		out.Reason = "Denied in hitl."
	}
	return marshal(out)
}

//go:embed opencode.js
var openCodePlugin string

// OpenCodePlugin returns hitl's OpenCode plugin (a JavaScript module, no
// dependencies): its tool.execute.before runs the program hitl with args
// (hook opencode and its flags) for the tools whose name the JavaScript
// regular expression matcher matches, and gives it a minute more than the
// question's timeout question.
func OpenCodePlugin(hitlPath string, args []string, matcher string, question time.Duration) string {
	quote := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		return string(b)
	}
	wait := HookTimeout(question).Milliseconds()
	return strings.NewReplacer(
		"{{HITL}}", quote(hitlPath),
		"{{ARGS}}", quote(args),
		"{{TOOLS}}", quote(matcher),
		"{{WAIT_MS}}", strconv.FormatInt(wait, 10),
	).Replace(openCodePlugin)
}
