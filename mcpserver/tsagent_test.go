package mcpserver_test

import (
	"os"
	"testing"

	"github.com/hitl-sh/hitl/internal/mcptest"
)

// tsAgent is an official TypeScript MCP client over Streamable HTTP,
// driven through internal/mcptest: agent.mjs (the SDK 1.32 client) or
// tasksagent.mjs (the Tasks extension package over the SDK 2 client).
type tsAgent struct {
	*mcptest.Agent
	t *testing.T
}

// startTSAgent connects the SDK 1.32 client (agent.mjs) to the MCP
// endpoint url with the bearer token (none when ""), and waits until it is
// connected.
func startTSAgent(t *testing.T, url, token string) *tsAgent {
	t.Helper()
	return startScript(t, mcptest.AgentScript, url, token)
}

// startScript runs the agent script against url with the bearer token,
// and waits until it is connected.
func startScript(t *testing.T, script, url, token string) *tsAgent {
	t.Helper()
	mcptest.Require(t, "@modelcontextprotocol/sdk", "@modelcontextprotocol/ext-tasks")
	a, _ := mcptest.Start(t, append(os.Environ(), "AGENT_TOKEN="+token), script, url)
	return &tsAgent{Agent: a, t: t}
}

// do runs an operation and returns its result, failing the test on an
// error.
func (a *tsAgent) do(op map[string]any) map[string]any {
	a.t.Helper()
	r, err := a.Reply(a.Send(op))
	if err != "" {
		a.t.Fatalf("%v failed in the agent: %s", op, err)
	}
	return r
}

// fails runs an operation that must fail, and returns its error.
func (a *tsAgent) fails(op map[string]any) string {
	a.t.Helper()
	r, err := a.Reply(a.Send(op))
	if err == "" {
		a.t.Fatalf("%v: got %v, want an error", op, r)
	}
	return err
}

// streamed waits for the message of the task stream of operation id
// that ok accepts.
func (a *tsAgent) streamed(id int, ok func(map[string]any) bool) map[string]any {
	a.t.Helper()
	m := a.Await(func(m map[string]any) bool {
		msg, _ := m["message"].(map[string]any)
		return m["event"] == "stream" && m["id"] == float64(id) && ok(msg)
	})
	return m["message"].(map[string]any)
}
