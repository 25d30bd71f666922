package mcpserver_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// tsAgent is an official TypeScript MCP client, driven through a script
// in mcpgate/testdata (its npm packages are installed there by test.sh),
// over Streamable HTTP: agent.mjs (the SDK 1.32 client) or tasksagent.mjs
// (the Tasks extension package over the SDK 2 client).
type tsAgent struct {
	t      *testing.T
	stdin  interface{ Write([]byte) (int, error) }
	stderr *lockedBuffer
	more   chan struct{}

	mu     sync.Mutex
	lines  []map[string]any
	nextID int
}

// The TypeScript agents; their node_modules sit beside them.
var (
	agentScript      = filepath.Join("..", "mcpgate", "testdata", "agent.mjs")
	tasksAgentScript = filepath.Join("..", "mcpgate", "testdata", "tasksagent.mjs")
)

// requireTSClient skips the test when the npm packages or node are
// missing, or fails it when HITL_TEST_REQUIRE_MCP_PACKAGES is 1 (test.sh
// sets it).
func requireTSClient(t *testing.T) {
	t.Helper()
	modules := filepath.Join(filepath.Dir(agentScript), "node_modules", "@modelcontextprotocol")
	_, err := os.Stat(filepath.Join(modules, "sdk", "package.json"))
	if err == nil {
		_, err = os.Stat(filepath.Join(modules, "ext-tasks", "package.json"))
	}
	_, nodeErr := exec.LookPath("node")
	if err == nil && nodeErr == nil {
		return
	}
	msg := "the MCP npm packages are not installed in mcpgate/testdata/node_modules (run test.sh), or node is missing"
	if os.Getenv("HITL_TEST_REQUIRE_MCP_PACKAGES") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// startTSAgent connects the SDK 1.32 client (agent.mjs) to the MCP
// endpoint url with the bearer token (none when ""), and waits until it is
// connected.
func startTSAgent(t *testing.T, url, token string) *tsAgent {
	t.Helper()
	return startScript(t, agentScript, url, token)
}

// startScript runs the agent script against url with the bearer token,
// and waits until it is connected.
func startScript(t *testing.T, script, url, token string) *tsAgent {
	t.Helper()
	requireTSClient(t)
	cmd := exec.Command("node", script, url)
	cmd.Env = append(os.Environ(), "AGENT_TOKEN="+token)
	a := &tsAgent{t: t, stderr: &lockedBuffer{}, more: make(chan struct{}, 1)}
	cmd.Stderr = a.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	a.stdin = stdin
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the agent: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			a.mu.Lock()
			a.lines = append(a.lines, m)
			a.mu.Unlock()
			select {
			case a.more <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
		cmd.Wait()
		if t.Failed() {
			t.Logf("agent stderr:\n%s", a.stderr)
		}
	})
	a.await(func(m map[string]any) bool { return m["event"] == "ready" })
	return a
}

// await waits for a line that ok accepts.
func (a *tsAgent) await(ok func(map[string]any) bool) map[string]any {
	a.t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		a.mu.Lock()
		for _, m := range a.lines {
			if ok(m) {
				a.mu.Unlock()
				return m
			}
		}
		a.mu.Unlock()
		select {
		case <-a.more:
		case <-timeout:
			a.t.Fatalf("the agent did not report in 60s; stderr:\n%s", a.stderr)
		}
	}
}

// send starts an operation and returns its id.
func (a *tsAgent) send(op map[string]any) int {
	a.t.Helper()
	a.mu.Lock()
	a.nextID++
	id := a.nextID
	a.mu.Unlock()
	op["id"] = id
	b, _ := json.Marshal(op)
	if _, err := a.stdin.Write(append(b, '\n')); err != nil {
		a.t.Fatalf("write to the agent: %v", err)
	}
	return id
}

// reply waits for operation id's outcome: its result, or its error.
func (a *tsAgent) reply(id int) (map[string]any, string) {
	a.t.Helper()
	m := a.await(func(m map[string]any) bool { return m["id"] == float64(id) && m["event"] == nil })
	if e, ok := m["error"]; ok {
		s, _ := e.(string)
		return nil, s
	}
	r, _ := m["result"].(map[string]any)
	return r, ""
}

// do runs an operation and returns its result, failing the test on an
// error.
func (a *tsAgent) do(op map[string]any) map[string]any {
	a.t.Helper()
	r, err := a.reply(a.send(op))
	if err != "" {
		a.t.Fatalf("%v failed in the agent: %s", op, err)
	}
	return r
}

// fails runs an operation that must fail, and returns its error.
func (a *tsAgent) fails(op map[string]any) string {
	a.t.Helper()
	r, err := a.reply(a.send(op))
	if err == "" {
		a.t.Fatalf("%v: got %v, want an error", op, r)
	}
	return err
}

// streamed waits for the message of the task stream of operation id
// that ok accepts.
func (a *tsAgent) streamed(id int, ok func(map[string]any) bool) map[string]any {
	a.t.Helper()
	m := a.await(func(m map[string]any) bool {
		msg, _ := m["message"].(map[string]any)
		return m["event"] == "stream" && m["id"] == float64(id) && ok(msg)
	})
	return m["message"].(map[string]any)
}
