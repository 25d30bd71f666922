package mcpserver

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// On the connections Run and Connect serve (stdio for hitl mcp), task
// requests are taken off the wire before the SDK reads them (it would
// refuse them as unknown methods) and answered on the same connection.
// There the server can also speak first: when a task it created on the
// connection ends, the client gets notifications/tasks/status, so it need
// not poll. A notifications/cancelled for a tasks/result in flight ends
// its wait (the task goes on).

// taskStatusTimeout bounds the write of a status notification.
const taskStatusTimeout = 5 * time.Second

// taskTransport wraps a transport so that its connection serves tasks.
type taskTransport struct {
	mcp.Transport
	s   *Server
	ctx context.Context // the caller's

	wg sync.WaitGroup // the connections' task requests and watches
}

// taskTransport returns t serving tasks as ctx's caller.
func (s *Server) taskTransport(ctx context.Context, t mcp.Transport) *taskTransport {
	return &taskTransport{Transport: t, s: s, ctx: ctx}
}

func (t *taskTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithCancel(context.WithoutCancel(t.ctx))
	return &taskConn{Connection: conn, t: t, ctx: cctx, cancel: cancel, calls: map[string]context.CancelFunc{}}, nil
}

// wait returns once every task request and watch of the transport's
// connections has returned.
func (t *taskTransport) wait() { t.wg.Wait() }

// taskConn is one client's connection, serving its task requests.
type taskConn struct {
	mcp.Connection
	t      *taskTransport
	ctx    context.Context // ends when the connection closes
	cancel context.CancelFunc

	mu     sync.Mutex
	client string                        // the client's name, from initialize
	calls  map[string]context.CancelFunc // task requests in flight, by JSON id
	closed bool
}

// Read returns the next message for the SDK, answering task requests on
// the way.
func (c *taskConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return msg, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			return msg, nil
		}
		switch {
		case req.Method == "initialize":
			var p struct {
				ClientInfo struct {
					Name string `json:"name"`
				} `json:"clientInfo"`
			}
			if json.Unmarshal(req.Params, &p) == nil {
				c.mu.Lock()
				c.client = p.ClientInfo.Name
				c.mu.Unlock()
			}
		case req.Method == "notifications/cancelled" && !req.ID.IsValid():
			var p struct {
				RequestID any `json:"requestId"`
			}
			if json.Unmarshal(req.Params, &p) == nil {
				c.cancelCall(p.RequestID)
			}
		case isTaskRequest(req):
			c.serve(req)
			continue
		}
		return msg, nil
	}
}

// Close ends the connection, and with it its task requests and watches
// (not its tasks, which go on in hitl).
func (c *taskConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	return c.Connection.Close()
}

// idKey is a request id as a map key.
func idKey(id any) string {
	b, _ := json.Marshal(id)
	return string(b)
}

// cancelCall ends the task request with the id, if one is in flight.
func (c *taskConn) cancelCall(id any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cancel, ok := c.calls[idKey(id)]; ok {
		cancel()
	}
}

// serve answers req in the background.
func (c *taskConn) serve(req *jsonrpc.Request) {
	key := idKey(req.ID.Raw())
	ctx, cancel := context.WithCancel(c.ctx)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		cancel()
		return
	}
	c.calls[key] = cancel
	client := c.client
	c.t.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.t.wg.Done()
		defer func() {
			c.mu.Lock()
			delete(c.calls, key)
			c.mu.Unlock()
			cancel()
		}()
		resp := c.t.s.serveTask(ctx, req, client)
		if resp == nil {
			return
		}
		if err := c.Connection.Write(c.ctx, resp); err != nil {
			c.t.s.log.Debug("mcp task response not sent", "method", req.Method, "error", err)
			return
		}
		if req.Method == methodToolsCall && resp.Error == nil {
			c.watch(resp.Result)
		}
	}()
}

// watch sends notifications/tasks/status when the task a CreateTaskResult
// holds ends, while the connection lasts.
func (c *taskConn) watch(created json.RawMessage) {
	var r struct {
		Task Task `json:"task"`
	}
	if json.Unmarshal(created, &r) != nil || r.Task.TaskID == "" || r.Task.Status != TaskWorking {
		return
	}
	s := c.t.s
	ctx := c.ctx
	for {
		in, err := s.svc.Wait(ctx, r.Task.TaskID)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			// The engine's and the client's Wait ride out a restarting
			// server; what they return is final.
			s.log.Debug("mcp task watch ended", "interaction_id", r.Task.TaskID, "error", err)
			return
		}
		if in == nil || in.ID != r.Task.TaskID {
			return
		}
		if !in.Status.Terminal() {
			continue
		}
		params, err := json.Marshal(taskOf(in, s.taskPoll, s.taskRetention))
		if err != nil {
			return
		}
		wctx, cancel := context.WithTimeout(ctx, taskStatusTimeout)
		defer cancel()
		if err := c.Connection.Write(wctx, &jsonrpc.Request{Method: notificationTaskStatus, Params: params}); err != nil {
			s.log.Debug("mcp task status not sent", "interaction_id", in.ID, "error", err)
		}
		return
	}
}
