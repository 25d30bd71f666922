package codextest

import (
	"fmt"
	"strconv"
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
	return &MCPServer{agenttest.NewMCPServer(t, "codextest", Version)}
}

// Config returns the config.toml table (for Options.Config) that gives
// Codex the server under name.
func (s *MCPServer) Config(name string) string {
	return fmt.Sprintf("[mcp_servers.%s]\nurl = %s\n\n", name, strconv.Quote(s.URL))
}
