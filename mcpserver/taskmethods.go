package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/ask"
	"github.com/hitl-sh/hitl/tools"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The task methods, and the _meta key that ties a result to its task.
const (
	methodToolsCall        = "tools/call"
	methodTasksGet         = "tasks/get"
	methodTasksResult      = "tasks/result"
	methodTasksCancel      = "tasks/cancel"
	methodTasksList        = "tasks/list"
	notificationTaskStatus = "notifications/tasks/status"
	relatedTaskMetaKey     = "io.modelcontextprotocol/related-task"
)

// TaskCancelReason is the reason a question is cancelled with when its
// task is: the person sees it as the card leaves the inbox.
const TaskCancelReason = "the agent cancelled its MCP task"

// taskTools are the tools that run as tasks: those that wait for a person
// (handoff_to_human returns at once).
var taskTools = []string{tools.AskHumanName, tools.HumanFeedbackName, tools.PermissionPromptName}

// taskResultGrace is how long past a question's deadline tasks/result
// keeps waiting for the outcome, so that a server that went away cannot
// hold it forever.
const taskResultGrace = time.Minute

// tasksListScan bounds how many interactions one tasks/list reads to
// fill a page (the rest follow with nextCursor).
const tasksListScan = 4

// taskCall is a tools/call's params as far as tasks read them.
type taskCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Task      *struct {
		TTL *float64 `json:"ttl"`
	} `json:"task"`
	Meta map[string]any `json:"_meta"`
}

// isTaskRequest reports whether req is one the server answers as tasks
// do: a tasks/* request, or a tools/call with a task.
func isTaskRequest(req *jsonrpc.Request) bool {
	if !req.IsCall() {
		return false
	}
	switch req.Method {
	case methodTasksGet, methodTasksResult, methodTasksCancel, methodTasksList:
		return true
	case methodToolsCall:
		var p taskCall
		return json.Unmarshal(req.Params, &p) == nil && p.Task != nil
	}
	return false
}

// taskError is a JSON-RPC error for a task request.
func taskError(code int64, format string, a ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

// serveTask answers a task request (see isTaskRequest) in ctx, which
// carries the caller; client is the MCP client's name. It returns nil
// when ctx ended first: nobody waits for the answer.
func (s *Server) serveTask(ctx context.Context, req *jsonrpc.Request, client string) *jsonrpc.Response {
	caller := hitl.CallerFrom(ctx)
	caller.Channel = hitl.ChannelMCP
	ctx = hitl.WithCaller(ctx, caller)
	var res any
	var werr *jsonrpc.Error
	switch req.Method {
	case methodToolsCall:
		res, werr = s.createTask(ctx, req.Params, client)
	case methodTasksGet:
		res, werr = s.getTask(ctx, req.Params)
	case methodTasksResult:
		res, werr = s.taskResult(ctx, req.Params)
	case methodTasksCancel:
		res, werr = s.cancelTask(ctx, req.Params)
	case methodTasksList:
		res, werr = s.listTasks(ctx, req.Params)
	default:
		werr = taskError(jsonrpc.CodeMethodNotFound, "method %q not found", req.Method)
	}
	if ctx.Err() != nil && werr != nil {
		return nil
	}
	resp := &jsonrpc.Response{ID: req.ID}
	if werr != nil {
		resp.Error = werr
		return resp
	}
	b, err := json.Marshal(res)
	if err != nil {
		resp.Error = taskError(jsonrpc.CodeInternalError, "encode %s result: %v", req.Method, err)
		return resp
	}
	resp.Result = b
	return resp
}

// owner is who a task belongs to: the caller, as this server knows it.
func owner(ctx context.Context) string { return hitl.CallerFrom(ctx).Name }

// createTask asks a task tool's question and returns the task at once
// (CreateTaskResult). A ttl shortens the question's timeout to it; it
// never lengthens it.
func (s *Server) createTask(ctx context.Context, params json.RawMessage, client string) (any, *jsonrpc.Error) {
	var p taskCall
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, taskError(jsonrpc.CodeInvalidParams, "invalid tools/call params: %v", err)
	}
	if !slices.Contains(taskTools, p.Name) {
		if _, known := tools.Lookup(p.Name); known {
			// The spec's answer to a task for a tool that forbids them.
			return nil, taskError(jsonrpc.CodeMethodNotFound, "tool %q does not run as a task; these do: %v", p.Name, taskTools)
		}
		return nil, taskError(jsonrpc.CodeInvalidParams, "unknown tool %q", p.Name)
	}
	agent := s.agent
	if agent == "" {
		agent = clip(client, hitl.MaxProvenanceLen)
	}
	var req hitl.CreateRequest
	var err error
	if p.Name == tools.PermissionPromptName {
		toolUseID, _ := p.Meta[tools.PermissionPromptMetaKey].(string)
		req, err = tools.PermissionPromptRequest(p.Arguments, toolUseID, &tools.ReviewOptions{SourceAgent: agent})
	} else {
		req, err = tools.Request(p.Name, p.Arguments)
		if req.SourceAgent == "" {
			req.SourceAgent = agent
		}
	}
	if err != nil {
		return nil, taskError(jsonrpc.CodeInvalidParams, "%s", tools.Render(p.Name, nil, err).Text)
	}
	if p.Task.TTL != nil {
		ttl := *p.Task.TTL / 1000
		if ttl < tools.MinAskTimeout {
			return nil, taskError(jsonrpc.CodeInvalidParams, "task ttl must be at least %d ms: a person needs time to answer", tools.MinAskTimeout*1000)
		}
		req.Timeout = min(req.Timeout, ttl)
	}
	req.Metadata = withMark(req.Metadata, taskMark{Tool: p.Name, Owner: owner(ctx)})
	in, err := ask.Create(ctx, s.svc, req)
	if err != nil {
		s.log.Log(ctx, logLevel(ctx, err), "mcp task not created", "tool", p.Name, "error", err)
		code := int64(jsonrpc.CodeInternalError)
		if c := hitl.ErrorCode(err); c == hitl.EINVALID || c == hitl.EVALUE || c == hitl.ECONFLICT {
			code = jsonrpc.CodeInvalidParams
		}
		return nil, taskError(code, "%s", tools.Render(p.Name, in, err).Text)
	}
	if m, ok := markOf(in); !ok || m.Tool != p.Name {
		// An idempotent repeat returned a question that is not this task.
		return nil, taskError(jsonrpc.CodeInvalidParams, "interaction %s already exists and is not a %s task; use a fresh idempotency key", in.ID, p.Name)
	}
	t := taskOf(in, s.taskPoll, s.taskRetention)
	s.log.Info("mcp task created", "tool", p.Name, "interaction_id", in.ID, "status", t.Status)
	return map[string]any{"task": t}, nil
}

// taskID reads the taskId of a tasks/get, tasks/result or tasks/cancel.
func taskID(params json.RawMessage) (string, *jsonrpc.Error) {
	var p struct {
		TaskID string `json:"taskId"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.TaskID == "" {
		return "", taskError(jsonrpc.CodeInvalidParams, "taskId is required")
	}
	return p.TaskID, nil
}

// task returns the task params names (the taskId of a tasks/get,
// tasks/result or tasks/cancel): its id and the interaction, if it is a
// task the caller made. Anything else is "not found", as another's task
// is.
func (s *Server) task(ctx context.Context, params json.RawMessage) (string, *hitl.Interaction, taskMark, *jsonrpc.Error) {
	id, werr := taskID(params)
	if werr != nil {
		return "", nil, taskMark{}, werr
	}
	in, err := s.svc.Get(ctx, id)
	switch {
	case hitl.ErrorCode(err) == hitl.ENOTFOUND || hitl.ErrorCode(err) == hitl.EFORBIDDEN:
		return "", nil, taskMark{}, taskError(jsonrpc.CodeInvalidParams, "task %s not found", id)
	case err != nil:
		return "", nil, taskMark{}, s.internal(ctx, "read task", id, err)
	case in == nil || in.ID != id:
		return "", nil, taskMark{}, taskError(jsonrpc.CodeInternalError, "the hitl server answered about another interaction than %s", id)
	}
	m, ok := markOf(in)
	if !ok || m.Owner != owner(ctx) {
		return "", nil, taskMark{}, taskError(jsonrpc.CodeInvalidParams, "task %s not found", id)
	}
	return id, in, m, nil
}

// internal logs err and returns the JSON-RPC error for it, saying what
// failed without the details a log has.
func (s *Server) internal(ctx context.Context, what, id string, err error) *jsonrpc.Error {
	s.log.Log(ctx, logLevel(ctx, err), "mcp task request failed", "op", what, "interaction_id", id, "error", err)
	msg := hitl.ErrorMessage(err)
	if hitl.ErrorCode(err) == hitl.EINTERNAL {
		msg = "internal error (see the hitl server's log)"
	}
	if errors.Is(err, hitl.ErrUnreachable) {
		msg = "cannot reach the hitl server; try again"
	}
	return taskError(jsonrpc.CodeInternalError, "%s %s: %s", what, id, msg)
}

// logLevel is error for an internal error while ctx holds, else warn.
func logLevel(ctx context.Context, err error) slog.Level {
	if hitl.ErrorCode(err) == hitl.EINTERNAL && ctx.Err() == nil {
		return slog.LevelError
	}
	return slog.LevelWarn
}

// getTask answers tasks/get.
func (s *Server) getTask(ctx context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
	_, in, _, werr := s.task(ctx, params)
	if werr != nil {
		return nil, werr
	}
	return taskOf(in, s.taskPoll, s.taskRetention), nil
}

// taskResult answers tasks/result: it waits until the question ends, then
// returns what the tool call would have returned, tied to its task.
func (s *Server) taskResult(ctx context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
	id, in, m, werr := s.task(ctx, params)
	if werr != nil {
		return nil, werr
	}
	watched, stop := hitl.WatchCredentials(ctx)
	defer stop()
	wctx, cancel := context.WithDeadline(watched, in.Deadline.Add(taskResultGrace))
	defer cancel()
	for !in.Status.Terminal() {
		got, err := s.svc.Wait(wctx, id)
		switch {
		case ctx.Err() != nil:
			return nil, taskError(jsonrpc.CodeInternalError, "request cancelled")
		case errors.Is(context.Cause(watched), hitl.ErrCredentialsEnded):
			return nil, taskError(jsonrpc.CodeInvalidRequest, "%v", hitl.ErrCredentialsEnded)
		case wctx.Err() != nil:
			return nil, taskError(jsonrpc.CodeInternalError, "the hitl server has not reported an outcome of task %s %s after its deadline; the task is still %s: ask again later", id, taskResultGrace, TaskWorking)
		case err != nil:
			return nil, s.internal(ctx, "wait for task", id, err)
		case got == nil || got.ID != id:
			return nil, taskError(jsonrpc.CodeInternalError, "the hitl server answered about another interaction than %s", id)
		}
		in = got
	}
	res := s.renderTask(m.Tool, in)
	res.Meta = mcp.Meta{relatedTaskMetaKey: map[string]any{"taskId": id}}
	s.log.Info("mcp task result", "tool", m.Tool, "interaction_id", id, "status", in.Status, "is_error", res.IsError)
	return res, nil
}

// renderTask returns the tool result a task's ended question gives: what
// the tool call would have returned, had it waited.
func (s *Server) renderTask(tool string, in *hitl.Interaction) *mcp.CallToolResult {
	if tool == tools.PermissionPromptName {
		d := tools.PermissionPromptOutcome(in, nil)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: d.Text()}}}
	}
	t, ok := tools.Lookup(tool)
	if !ok {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("task %s was made by an unknown tool %q", in.ID, tool)}}}
	}
	return toolResult(t, tools.Render(tool, in, nil))
}

// cancelTask answers tasks/cancel: the question is cancelled, with
// TaskCancelReason, and leaves the person's inbox.
func (s *Server) cancelTask(ctx context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
	id, in, m, werr := s.task(ctx, params)
	if werr != nil {
		return nil, werr
	}
	if !in.Status.Terminal() {
		out, err := s.svc.Cancel(ctx, id, TaskCancelReason)
		if err == nil && out != nil && out.ID == id {
			s.log.Info("mcp task cancelled", "tool", m.Tool, "interaction_id", id)
			return taskOf(out, s.taskPoll, s.taskRetention), nil
		}
		// It may have ended meanwhile; if not, say why it was not cancelled.
		got, gerr := s.svc.Get(ctx, id)
		if gerr != nil || got == nil || !got.Status.Terminal() {
			if err == nil {
				err = hitl.Errorf(hitl.EINTERNAL, "the hitl server answered about another interaction than %s", id)
			}
			return nil, s.internal(ctx, "cancel task", id, err)
		}
		in = got
	}
	return nil, taskError(jsonrpc.CodeInvalidParams, "cannot cancel task %s: it is already %s", id, taskOf(in, s.taskPoll, s.taskRetention).Status)
}

// listTasks answers tasks/list: the caller's tasks, newest first.
func (s *Server) listTasks(ctx context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
	var p struct {
		Cursor string `json:"cursor"`
	}
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, taskError(jsonrpc.CodeInvalidParams, "invalid tasks/list params: %v", err)
		}
	}
	me := owner(ctx)
	tasks := []*Task{}
	cursor := p.Cursor
	for range tasksListScan {
		list, next, err := s.svc.List(ctx, hitl.ListFilter{Limit: hitl.DefaultListLimit, Cursor: cursor})
		if hitl.ErrorCode(err) == hitl.EINVALID && cursor != "" {
			return nil, taskError(jsonrpc.CodeInvalidParams, "invalid cursor")
		}
		if err != nil {
			return nil, s.internal(ctx, "list tasks", "", err)
		}
		for _, in := range list {
			if m, ok := markOf(in); ok && m.Owner == me {
				tasks = append(tasks, taskOf(in, s.taskPoll, s.taskRetention))
			}
		}
		cursor = next
		if cursor == "" || len(tasks) >= hitl.DefaultListLimit {
			break
		}
	}
	res := map[string]any{"tasks": tasks}
	if cursor != "" {
		res["nextCursor"] = cursor
	}
	return res, nil
}
