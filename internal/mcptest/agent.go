// Package mcptest drives the official TypeScript MCP clients from Go
// tests: the scripts in mcpgate/testdata (agent.mjs, the SDK 1.32 client;
// tasksagent.mjs, the Tasks extension over the SDK 2 client), whose npm
// packages test.sh installs beside them. A script reads one JSON
// operation a line on stdin and writes one JSON line per outcome or event
// on stdout. It is for tests only.
package mcptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// RequireEnv is the environment variable that, set to 1, makes missing
// npm packages fail the test instead of skipping it (test.sh sets it).
const RequireEnv = "HITL_TEST_REQUIRE_MCP_PACKAGES"

// Testdata returns mcpgate/testdata, where the scripts and their
// node_modules are, as an absolute path.
func Testdata() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "mcpgate", "testdata")
}

// Modules returns the node_modules directory test.sh installs into.
func Modules() string { return filepath.Join(Testdata(), "node_modules") }

// The scripts.
var (
	AgentScript      = filepath.Join(Testdata(), "agent.mjs")
	TasksAgentScript = filepath.Join(Testdata(), "tasksagent.mjs")
)

// Require skips the test when node or one of the npm packages (names
// under node_modules, such as "@modelcontextprotocol/sdk") is missing, or
// fails it when HITL_TEST_REQUIRE_MCP_PACKAGES is 1.
func Require(t testing.TB, packages ...string) {
	t.Helper()
	_, err := exec.LookPath("node")
	for _, p := range packages {
		if err == nil {
			_, err = os.Stat(filepath.Join(Modules(), p, "package.json"))
		}
	}
	if err == nil {
		return
	}
	msg := "the MCP npm packages are not installed in mcpgate/testdata/node_modules (run test.sh), or node is missing"
	if os.Getenv(RequireEnv) == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// Agent is a running script.
type Agent struct {
	t      testing.TB
	stdin  io.WriteCloser
	stderr *syncBuffer
	more   chan struct{}

	mu     sync.Mutex
	lines  []map[string]any
	nextID int
}

// Start runs script with args in the environment env (the whole of it),
// ends it when the test ends (logging its stderr if the test failed), and
// waits until it reports "ready", which it returns.
func Start(t testing.TB, env []string, script string, args ...string) (*Agent, map[string]any) {
	t.Helper()
	cmd := exec.Command("node", append([]string{script}, args...)...)
	cmd.Env = env
	a := &Agent{t: t, stderr: &syncBuffer{}, more: make(chan struct{}, 1)}
	cmd.Stderr = a.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if a.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
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
		a.stdin.Close()
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
	ready := a.Await(func(m map[string]any) bool { return m["event"] == "ready" })
	return a, ready
}

// Await waits, at most a minute, for a line that ok accepts.
func (a *Agent) Await(ok func(map[string]any) bool) map[string]any {
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

// Send starts an operation and returns its id.
func (a *Agent) Send(op map[string]any) int {
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

// Reply waits for operation id's outcome: its result, or its error.
func (a *Agent) Reply(id int) (result map[string]any, err string) {
	a.t.Helper()
	m := a.Await(func(m map[string]any) bool { return m["id"] == float64(id) && m["event"] == nil })
	if e, ok := m["error"]; ok {
		s, _ := e.(string)
		if s == "" {
			b, _ := json.Marshal(e)
			s = string(b)
		}
		return nil, s
	}
	r, _ := m["result"].(map[string]any)
	return r, ""
}

// Outcome waits for operation id's result, failing the test on an error.
func (a *Agent) Outcome(id int) map[string]any {
	a.t.Helper()
	r, err := a.Reply(id)
	if err != "" {
		a.t.Fatalf("operation %d failed in the agent: %s", id, err)
	}
	return r
}

// Stderr is what the agent wrote to its standard error so far.
func (a *Agent) Stderr() string { return a.stderr.String() }

// syncBuffer is a bytes.Buffer safe for a process's writes and a test's
// reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TaskResultText returns the text of a task's tasks/result (a
// CallToolResult) and whether it is an error, checking that the result is
// tied to task id.
func TaskResultText(t testing.TB, res map[string]any, id string) (text string, isError bool) {
	t.Helper()
	meta, _ := res["_meta"].(map[string]any)
	if rel, _ := meta["io.modelcontextprotocol/related-task"].(map[string]any); rel["taskId"] != id {
		t.Errorf("result _meta %v: want the related task %s", res["_meta"], id)
	}
	content, _ := res["content"].([]any)
	if len(content) != 1 {
		t.Fatalf("result %v: want one content item", res)
	}
	text, _ = content[0].(map[string]any)["text"].(string)
	isError, _ = res["isError"].(bool)
	return text, isError
}
