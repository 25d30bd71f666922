package mcpserver

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK knows nothing of tasks, so the server declares them by
// rewriting two of the SDK's results on their way out: initialize gains
// capabilities.tasks (list, cancel, and tools/call as a task request),
// and tools/list marks each task tool with execution.taskSupport
// "optional" (a client may call it either way). The task requests
// themselves never reach the SDK (see taskhttp.go and taskconn.go).

// declareTasks is the receiving middleware that declares tasks, and
// remembers each session's client name for the task calls over HTTP.
func (s *Server) declareTasks(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss.ID() != "" {
			if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
				s.clients.set(ss.ID(), p.ClientInfo.Name)
			}
		}
		switch r := res.(type) {
		case *mcp.InitializeResult:
			return &initializeWithTasks{r}, nil
		case *mcp.ListToolsResult:
			return &toolsWithTasks{r}, nil
		}
		return res, nil
	}
}

// tasksCapability is the server's capabilities.tasks.
var tasksCapability = map[string]any{
	"list":     map[string]any{},
	"cancel":   map[string]any{},
	"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}},
}

// initializeWithTasks is an initialize result that declares tasks.
type initializeWithTasks struct{ *mcp.InitializeResult }

func (r *initializeWithTasks) MarshalJSON() ([]byte, error) {
	var m map[string]any
	if err := remarshal(r.InitializeResult, &m); err != nil {
		return nil, err
	}
	caps, _ := m["capabilities"].(map[string]any)
	if caps == nil {
		caps = map[string]any{}
	}
	caps["tasks"] = tasksCapability
	m["capabilities"] = caps
	return json.Marshal(m)
}

// toolsWithTasks is a tools/list result that marks the task tools.
type toolsWithTasks struct{ *mcp.ListToolsResult }

func (r *toolsWithTasks) MarshalJSON() ([]byte, error) {
	var m map[string]any
	if err := remarshal(r.ListToolsResult, &m); err != nil {
		return nil, err
	}
	list, _ := m["tools"].([]any)
	for _, t := range list {
		if tool, ok := t.(map[string]any); ok {
			if name, _ := tool["name"].(string); slices.Contains(taskTools, name) {
				tool["execution"] = map[string]any{"taskSupport": "optional"}
			}
		}
	}
	return json.Marshal(m)
}

// remarshal encodes v as JSON and decodes it into out.
func remarshal(v, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// clientNames are the client names of the HTTP sessions, by session id,
// forgotten after sessionTimeout unseen.
type clientNames struct {
	mu    sync.Mutex
	names map[string]clientName
}

type clientName struct {
	name string
	seen time.Time
}

func newClientNames() *clientNames { return &clientNames{names: map[string]clientName{}} }

// set records the client name of session id.
func (c *clientNames) set(id, name string) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, known := c.names[id]; !known && len(c.names) >= 256 {
		for k, v := range c.names {
			if now.Sub(v.seen) > sessionTimeout {
				delete(c.names, k)
			}
		}
	}
	c.names[id] = clientName{name: name, seen: now}
}

// get returns the client name of session id, "" if unknown.
func (c *clientNames) get(id string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.names[id].name
}
