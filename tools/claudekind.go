package tools

import (
	"encoding/json"
	"strings"

	"github.com/hitl-sh/hitl"
)

// claudeKind returns the kind of a Claude Code tool call and its input in
// that kind's terms (see hitl.Kinds), or "" and nil for a tool of no kind.
// fields is the call's input, decoded; cwd the project directory.
func claudeKind(tool string, fields map[string]json.RawMessage, cwd string) (string, json.RawMessage) {
	str := func(k string) (string, bool) {
		var s string
		return s, json.Unmarshal(fields[k], &s) == nil
	}
	switch tool {
	case "Bash":
		if cmd, ok := str("command"); ok {
			return hitl.KindShell, hitl.ShellInput(cmd, cwd)
		}
	case "Write":
		p, ok := str("file_path")
		content, _ := str("content")
		if ok {
			return hitl.KindFileWrite, hitl.FileWriteInput(p, content)
		}
	case "Edit":
		p, ok := str("file_path")
		old, _ := str("old_string")
		new, _ := str("new_string")
		if ok {
			return hitl.KindFileEdit, hitl.FileEditInput(p, old, new)
		}
	case "MultiEdit", "NotebookEdit":
		p, ok := str("file_path")
		if !ok {
			p, ok = str("notebook_path")
		}
		if ok {
			b, _ := json.Marshal(map[string]string{"path": p})
			return hitl.KindFileEdit, b
		}
	case "Read":
		if p, ok := str("file_path"); ok {
			return hitl.KindFileRead, hitl.FileReadInput(p)
		}
	case "WebFetch":
		if u, ok := str("url"); ok {
			return hitl.KindWebFetch, hitl.WebFetchInput(u)
		}
	default:
		if server, name, ok := mcpToolName(tool); ok {
			args, _ := json.Marshal(fields)
			return hitl.KindMCP, hitl.MCPInput(server, name, args)
		}
	}
	return "", nil
}

// mcpToolName splits an MCP tool's name as Claude Code (and Codex) give
// it, mcp__<server>__<tool>.
func mcpToolName(tool string) (server, name string, ok bool) {
	rest, found := strings.CutPrefix(tool, "mcp__")
	if !found {
		return "", "", false
	}
	server, name, found = strings.Cut(rest, "__")
	return server, name, found && server != "" && name != ""
}
