package tools

import (
	"encoding/json"
	"fmt"
)

// Format is a provider's tool-definition format.
type Format string

// Formats Marshal writes.
const (
	// FormatOpenAI is OpenAI's Chat Completions function tool:
	// {"type": "function", "function": {"name", "description", "parameters"}}.
	FormatOpenAI Format = "openai"
	// FormatAnthropic is Anthropic's Messages API tool:
	// {"name", "description", "input_schema"}.
	FormatAnthropic Format = "anthropic"
	// FormatMCP is the Model Context Protocol's tool, as tools/list lists
	// it: {"name", "title", "description", "inputSchema", "outputSchema"}.
	FormatMCP Format = "mcp"
)

// Formats lists the formats Marshal writes.
var Formats = []Format{FormatOpenAI, FormatAnthropic, FormatMCP}

// OpenAITool is a tool in OpenAI's Chat Completions format.
type OpenAITool struct {
	Type     string         `json:"type"`
	Function OpenAIFunction `json:"function"`
}

// OpenAIFunction is the function an OpenAITool describes.
type OpenAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// AnthropicTool is a tool in Anthropic's Messages API format.
type AnthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// MCPTool is a tool as an MCP server lists it.
type MCPTool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
}

// OpenAI returns t in OpenAI's format.
func (t Tool) OpenAI() OpenAITool {
	return OpenAITool{Type: "function", Function: OpenAIFunction{Name: t.Name, Description: t.Description, Parameters: t.InputSchema}}
}

// Anthropic returns t in Anthropic's format.
func (t Tool) Anthropic() AnthropicTool {
	return AnthropicTool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
}

// MCP returns t in MCP's format.
func (t Tool) MCP() MCPTool {
	return MCPTool(t)
}

// Marshal returns the tools as an indented JSON array in the given format,
// ready to pass to a provider's API.
func Marshal(format Format, tools []Tool) ([]byte, error) {
	var list []any
	for _, t := range tools {
		switch format {
		case FormatOpenAI:
			list = append(list, t.OpenAI())
		case FormatAnthropic:
			list = append(list, t.Anthropic())
		case FormatMCP:
			list = append(list, t.MCP())
		default:
			return nil, fmt.Errorf("unknown tool format %q: use openai, anthropic or mcp", format)
		}
	}
	if list == nil {
		list = []any{}
	}
	return json.MarshalIndent(list, "", "  ")
}
