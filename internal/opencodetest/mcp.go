package opencodetest

import (
	"testing"

	"github.com/hitl-sh/hitl/internal/agenttest"
)

// MCPToolName is the name of an MCPServer's one tool.
const MCPToolName = agenttest.MCPToolName

// MCPServer is an MCP server over streamable HTTP on loopback with one
// tool, note, that records its arguments (see agenttest.MCPServer).
type MCPServer struct {
	*agenttest.MCPServer
}

// NewMCPServer starts an MCPServer; it stops when the test ends.
func NewMCPServer(t testing.TB) *MCPServer {
	t.Helper()
	return &MCPServer{agenttest.NewMCPServer(t, "opencodetest", Version)}
}

// Config returns the "mcp" entry that gives OpenCode the server
// (streamable HTTP): put it in the configuration as
// "mcp": {"<name>": s.Config()}.
func (s *MCPServer) Config() map[string]any {
	return map[string]any{"type": "remote", "url": s.URL, "enabled": true}
}
