package hitl

import "encoding/json"

// The kinds of action, and their input's fields. An agent's adapter maps
// each of its tools that does one of these to it, so that one rule (and
// one way of showing a call) serves every agent.
const (
	KindShell     = "shell"      // {"command": string, "cwd": string}
	KindFileWrite = "file.write" // {"path": string, "content": string}
	KindFileEdit  = "file.edit"  // {"path": string, "old": string, "new": string} or {"path", "diff": string}
	KindFileRead  = "file.read"  // {"path": string}
	KindMCP       = "mcp"        // {"server": string, "tool": string, "args": object}
	KindWebFetch  = "web.fetch"  // {"url": string}
)

// Kinds returns the kinds of action, in the order above.
func Kinds() []string {
	return []string{KindShell, KindFileWrite, KindFileEdit, KindFileRead, KindMCP, KindWebFetch}
}

// validKind reports whether k is one of Kinds.
func validKind(k string) bool {
	for _, x := range Kinds() {
		if k == x {
			return true
		}
	}
	return false
}

// ShellInput is the input of a shell action: the command line, and the
// directory it runs in ("" when unknown).
func ShellInput(command, cwd string) json.RawMessage {
	return kindInput(struct {
		Command string `json:"command"`
		Cwd     string `json:"cwd,omitempty"`
	}{command, cwd})
}

// FileWriteInput is the input of a file.write action.
func FileWriteInput(path, content string) json.RawMessage {
	return kindInput(struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}{path, content})
}

// FileEditInput is the input of a file.edit action that replaces old with
// new in the file at path.
func FileEditInput(path, old, new string) json.RawMessage {
	return kindInput(struct {
		Path string `json:"path"`
		Old  string `json:"old"`
		New  string `json:"new"`
	}{path, old, new})
}

// FileDiffInput is the input of a file.edit action given as a diff (or a
// patch) of the file at path.
func FileDiffInput(path, diff string) json.RawMessage {
	return kindInput(struct {
		Path string `json:"path"`
		Diff string `json:"diff"`
	}{path, diff})
}

// FileReadInput is the input of a file.read action.
func FileReadInput(path string) json.RawMessage {
	return kindInput(struct {
		Path string `json:"path"`
	}{path})
}

// MCPInput is the input of an mcp action: a tool of an MCP server, with
// its arguments (a JSON object; null is {}).
func MCPInput(server, tool string, args json.RawMessage) json.RawMessage {
	if isNull(args) {
		args = json.RawMessage("{}")
	}
	return kindInput(struct {
		Server string          `json:"server"`
		Tool   string          `json:"tool"`
		Args   json.RawMessage `json:"args"`
	}{server, tool, args})
}

// WebFetchInput is the input of a web.fetch action.
func WebFetchInput(url string) json.RawMessage {
	return kindInput(struct {
		URL string `json:"url"`
	}{url})
}

// kindInput encodes one of the inputs above (which always encode; an
// MCP call's args that are not JSON give {} in their place).
func kindInput(v any) json.RawMessage {
	b, err := encodeJSON(v)
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}

// kindTitles name the kinds for people.
var kindTitles = map[string]string{
	KindShell:     "shell command",
	KindFileWrite: "file write",
	KindFileEdit:  "file edit",
	KindFileRead:  "file read",
	KindMCP:       "MCP tool call",
	KindWebFetch:  "web fetch",
}

// KindTitle names a kind of action for people ("shell command"); "" for
// no kind, and the kind itself for one it does not know.
func KindTitle(kind string) string {
	if t, ok := kindTitles[kind]; ok {
		return t
	}
	return kind
}
