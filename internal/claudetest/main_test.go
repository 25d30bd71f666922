package claudetest

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	Main() // this binary is also the stdio MCP server of PermissionServer
	os.Exit(m.Run())
}
