package mcpserver_test

import (
	"context"
	"encoding/json"
	"github.com/hitl-sh/hitl/internal/mcptest"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/mcpserver"
)

// Tests of MCP tasks with the official TypeScript SDK's task client
// (client.experimental.tasks, protocol 2025-11-25) over Streamable HTTP
// to hitl's /mcp, with API tokens: agents a and b, and alice answering
// over the HTTP API.

// taskServer is a hitl server with people, two agents' tokens and alice's
// client.
type taskServer struct {
	*hitltest.Server
	tokenA, tokenB string
	person         *client.Client
}

// startTaskServer starts a taskServer over db.
func startTaskServer(t *testing.T, db hitltest.DB) *taskServer {
	t.Helper()
	ts := hitltest.Start(t, &hitltest.Options{DB: db, People: true})
	s := &taskServer{Server: ts, tokenA: ts.Token(t, "agent-a", hitl.RoleAgent), tokenB: ts.Token(t, "agent-b", hitl.RoleAgent)}
	s.person = hitltest.NewClient(t, ts.URL, &client.Options{Token: ts.Token(t, "alice", hitl.RoleResponder), Channel: hitl.ChannelWeb})
	return s
}

// taskOp is an operation on a task.
func taskOp(op, id string) map[string]any { return map[string]any{"op": op, "taskId": id} }

// createTask creates a task and returns its operation id and task.
func createTask(t *testing.T, a *tsAgent, op map[string]any) (int, map[string]any) {
	t.Helper()
	op["op"] = "task"
	n := a.Send(op)
	task, err := a.Reply(n)
	if err != "" {
		t.Fatalf("create task %v: %s", op, err)
	}
	if id, _ := task["taskId"].(string); id == "" {
		t.Fatalf("created task %v: no taskId", task)
	}
	return n, task
}

func TestTaskDeclared(t *testing.T) {
	t.Parallel()
	s := startTaskServer(t, hitltest.DB{})
	a := startTSAgent(t, s.URL+"/mcp", s.tokenA)
	caps := a.do(map[string]any{"op": "capabilities"})
	tasks, _ := caps["tasks"].(map[string]any)
	requests, _ := tasks["requests"].(map[string]any)
	toolsReq, _ := requests["tools"].(map[string]any)
	if _, ok := toolsReq["call"]; !ok || tasks["list"] == nil || tasks["cancel"] == nil {
		t.Errorf("capabilities.tasks = %v, want list, cancel and requests.tools.call", caps["tasks"])
	}
	list := a.do(map[string]any{"op": "list"})
	want := map[string]string{"ask_human": "optional", "human_feedback": "optional", "permission_prompt": "optional", "handoff_to_human": ""}
	for _, tool := range list["tools"].([]any) {
		tool := tool.(map[string]any)
		name := tool["name"].(string)
		exec, _ := tool["execution"].(map[string]any)
		got, _ := exec["taskSupport"].(string)
		if w, ok := want[name]; ok && got != w {
			t.Errorf("%s: execution.taskSupport %q, want %q", name, got, w)
		}
	}
}

// TestTaskAnswered: ask_human as a task returns at once, works while the
// person decides, and its result is the tool's usual result.
func TestTaskAnswered(t *testing.T) {
	t.Parallel()
	s := startTaskServer(t, hitltest.DB{})
	a := startTSAgent(t, s.URL+"/mcp", s.tokenA)
	ctx := context.Background()

	n, task := createTask(t, a, map[string]any{"name": "ask_human", "args": map[string]any{
		"question": "Which colour?", "options": []string{"Red", "Blue"}, "timeout": 600}})
	id := task["taskId"].(string)
	if task["status"] != mcpserver.TaskWorking || task["ttl"] != float64(600000) || task["pollInterval"] == nil {
		t.Errorf("created task %v: want working, ttl 600000 and a pollInterval", task)
	}
	in, err := s.Broker.Get(ctx, id)
	if err != nil {
		t.Fatalf("the task is not an interaction: %v", err)
	}
	if in.Status != hitl.StatusPending || in.CreatedBy != "agent-a" || in.SourceAgent != "ts-agent" {
		t.Errorf("interaction %s: status %s, created by %q, source %q", id, in.Status, in.CreatedBy, in.SourceAgent)
	}
	if got := a.do(taskOp("getTask", id)); got["status"] != mcpserver.TaskWorking || !strings.Contains(got["statusMessage"].(string), "waiting for a person") {
		t.Errorf("tasks/get: %v, want working", got)
	}
	if got := a.do(map[string]any{"op": "listTasks"}); len(got["tasks"].([]any)) != 1 || got["tasks"].([]any)[0].(map[string]any)["taskId"] != id {
		t.Errorf("tasks/list: %v, want the task", got)
	}

	if _, err := s.person.Respond(ctx, id, json.RawMessage(`"blue"`)); err != nil {
		t.Fatalf("answer: %v", err)
	}
	// callToolStream, polling, sees it complete and fetches the result.
	streamed := a.streamed(n, func(m map[string]any) bool { return m["type"] == "result" || m["type"] == "error" })
	if streamed["type"] != "result" {
		t.Fatalf("callToolStream: %v, want the result", streamed)
	}
	got := a.do(taskOp("getTask", id))
	if got["status"] != mcpserver.TaskCompleted || got["statusMessage"] != "answered by alice via web" {
		t.Errorf("tasks/get after the answer: %v, want completed", got)
	}
	res := a.do(taskOp("taskResult", id))
	text, isError := mcptest.TaskResultText(t, res, id)
	if want := "Chose Blue (value \"blue\").\n(answered by alice via web)"; text != want || isError {
		t.Errorf("tasks/result: %q (isError %v), want %q", text, isError, want)
	}
	if sc, _ := res["structuredContent"].(map[string]any); sc["value"] != "blue" || sc["interaction_id"] != id {
		t.Errorf("structuredContent %v: want the answer", res["structuredContent"])
	}
}

// TestTaskOtherTools: human_feedback and permission_prompt run as tasks,
// with their own results; handoff_to_human and bad arguments are refused.
func TestTaskOtherTools(t *testing.T) {
	t.Parallel()
	s := startTaskServer(t, hitltest.DB{})
	a := startTSAgent(t, s.URL+"/mcp", s.tokenA)
	ctx := context.Background()

	_, task := createTask(t, a, map[string]any{"name": "human_feedback", "args": map[string]any{"message_for_user": "The 2FA code?", "unique_id": "code-1"}})
	id := task["taskId"].(string)
	if _, err := s.person.Respond(ctx, id, json.RawMessage(`"424242"`)); err != nil {
		t.Fatal(err)
	}
	if text, isError := mcptest.TaskResultText(t, a.do(taskOp("taskResult", id)), id); text != "424242" || isError {
		t.Errorf("human_feedback result %q (isError %v), want the code", text, isError)
	}

	_, task = createTask(t, a, map[string]any{"name": "permission_prompt", "args": map[string]any{"tool_name": "Bash", "input": map[string]any{"command": "make deploy"}}})
	id = task["taskId"].(string)
	if _, err := s.person.Respond(ctx, id, json.RawMessage(`"approve"`)); err != nil {
		t.Fatal(err)
	}
	if text, _ := mcptest.TaskResultText(t, a.do(taskOp("taskResult", id)), id); text != `{"behavior":"allow","updatedInput":{"command":"make deploy"}}` {
		t.Errorf("permission_prompt result %s, want allow", text)
	}

	if err := a.fails(map[string]any{"op": "task", "name": "handoff_to_human", "args": map[string]any{"message": "over to you"}}); !strings.Contains(err, "-32601") || !strings.Contains(err, "does not run as a task") {
		t.Errorf("handoff as a task: %s", err)
	}
	if err := a.fails(map[string]any{"op": "task", "name": "ask_human", "args": map[string]any{}}); !strings.Contains(err, "question is required") {
		t.Errorf("ask_human without a question: %s", err)
	}
}

// TestTaskCancelled: tasks/cancel cancels the question, with the reason
// the person sees; a cancelled task cannot be cancelled again and its
// result is an error.
func TestTaskCancelled(t *testing.T) {
	t.Parallel()
	s := startTaskServer(t, hitltest.DB{})
	a := startTSAgent(t, s.URL+"/mcp", s.tokenA)
	n, task := createTask(t, a, map[string]any{"name": "ask_human", "args": map[string]any{"question": "Drop the table?", "interaction_type": "approval"}})
	id := task["taskId"].(string)
	if got := a.do(taskOp("cancelTask", id)); got["status"] != mcpserver.TaskCancelled || !strings.Contains(got["statusMessage"].(string), mcpserver.TaskCancelReason) {
		t.Errorf("tasks/cancel: %v, want cancelled with the reason", got)
	}
	in, err := s.person.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if in.Status != hitl.StatusCancelled || in.Result.Reason != mcpserver.TaskCancelReason {
		t.Errorf("the person sees %s (%+v), want cancelled with %q", in.Status, in.Result, mcpserver.TaskCancelReason)
	}
	if err := a.fails(taskOp("cancelTask", id)); !strings.Contains(err, "already cancelled") {
		t.Errorf("second tasks/cancel: %s", err)
	}
	text, isError := mcptest.TaskResultText(t, a.do(taskOp("taskResult", id)), id)
	if !isError || !strings.Contains(text, mcpserver.TaskCancelReason) {
		t.Errorf("tasks/result: %q (isError %v), want an error with the reason", text, isError)
	}
	if m := a.streamed(n, func(m map[string]any) bool { return m["type"] == "error" || m["type"] == "result" }); !strings.Contains(m["error"].(string), "cancelled") {
		t.Errorf("callToolStream: %v, want the cancellation", m)
	}
}

// TestTaskTTL: a task's ttl bounds its question's timeout; the question
// expires then, and the task fails with the reason.
func TestTaskTTL(t *testing.T) {
	t.Parallel()
	s := startTaskServer(t, hitltest.DB{})
	a := startTSAgent(t, s.URL+"/mcp", s.tokenA)
	_, task := createTask(t, a, map[string]any{"name": "ask_human", "ttl": 1500, "args": map[string]any{"question": "Quick one?", "timeout": 600}})
	id := task["taskId"].(string)
	if task["ttl"] != float64(1500) {
		t.Errorf("ttl %v, want 1500", task["ttl"])
	}
	res := a.do(taskOp("taskResult", id)) // blocks until the question expires
	if text, isError := mcptest.TaskResultText(t, res, id); !isError || !strings.Contains(text, "timeout waiting for feedback") {
		t.Errorf("tasks/result: %q (isError %v), want the expiry", text, isError)
	}
	if got := a.do(taskOp("getTask", id)); got["status"] != mcpserver.TaskFailed || !strings.Contains(got["statusMessage"].(string), "nobody answered before the deadline") {
		t.Errorf("tasks/get: %v, want failed with the reason", got)
	}
	if err := a.fails(map[string]any{"op": "task", "name": "ask_human", "ttl": 10, "args": map[string]any{"question": "Too quick?"}}); !strings.Contains(err, "ttl must be at least") {
		t.Errorf("ttl below a second: %s", err)
	}
}

// TestTaskScopedToCaller: another agent's token can neither read, wait
// on, cancel nor list a task.
func TestTaskScopedToCaller(t *testing.T) {
	t.Parallel()
	s := startTaskServer(t, hitltest.DB{})
	a := startTSAgent(t, s.URL+"/mcp", s.tokenA)
	b := startTSAgent(t, s.URL+"/mcp", s.tokenB)
	_, task := createTask(t, a, map[string]any{"name": "ask_human", "args": map[string]any{"question": "Mine?"}})
	id := task["taskId"].(string)
	for _, op := range []string{"getTask", "taskResult", "cancelTask"} {
		if err := b.fails(taskOp(op, id)); !strings.Contains(err, "not found") {
			t.Errorf("%s by another agent: %s, want not found", op, err)
		}
	}
	if got := b.do(map[string]any{"op": "listTasks"}); len(got["tasks"].([]any)) != 0 {
		t.Errorf("another agent's tasks/list: %v, want none", got)
	}
	if got := a.do(taskOp("getTask", id)); got["status"] != mcpserver.TaskWorking {
		t.Errorf("the owner's tasks/get after the attempts: %v, want working", got)
	}
	// An interaction that is not a task is not one, even to its creator.
	in, _, err := hitltest.NewClient(t, s.URL, &client.Options{Token: s.tokenA}).Create(context.Background(), hitl.CreateRequest{Question: "Over the API", Timeout: 600})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.fails(taskOp("getTask", in.ID)); !strings.Contains(err, "not found") {
		t.Errorf("tasks/get of a plain interaction: %s, want not found", err)
	}
}

// TestTaskAcrossReplicas: on PostgreSQL, a task created on replica A is
// read, waited on and cancelled on replica B.
func TestTaskAcrossReplicas(t *testing.T) {
	t.Parallel()
	db := hitltest.PostgresDB(t)
	s := startTaskServer(t, db)
	replicaB := hitltest.Start(t, &hitltest.Options{DB: db})
	onA := startTSAgent(t, s.URL+"/mcp", s.tokenA)
	onB := startTSAgent(t, replicaB.URL+"/mcp", s.tokenA)
	otherOnB := startTSAgent(t, replicaB.URL+"/mcp", s.tokenB)

	_, task := createTask(t, onA, map[string]any{"name": "ask_human", "args": map[string]any{"question": "Roll out?", "interaction_type": "approval"}})
	id := task["taskId"].(string)
	if got := onB.do(taskOp("getTask", id)); got["status"] != mcpserver.TaskWorking {
		t.Errorf("tasks/get on B: %v, want working", got)
	}
	if err := otherOnB.fails(taskOp("getTask", id)); !strings.Contains(err, "not found") {
		t.Errorf("another agent on B: %s, want not found", err)
	}
	waiting := onB.Send(taskOp("taskResult", id))
	hitltest.WaitFor(t, "tasks/result to wait on B", func() bool { return replicaB.Broker.Waiting() == 1 })
	if _, err := s.person.Respond(context.Background(), id, json.RawMessage(`true`)); err != nil {
		t.Fatal(err)
	}
	res, err := onB.Reply(waiting)
	if err != "" {
		t.Fatalf("tasks/result on B: %s", err)
	}
	if text, isError := mcptest.TaskResultText(t, res, id); isError || !strings.HasPrefix(text, "Approved (value true).") {
		t.Errorf("tasks/result on B: %q (isError %v), want the approval", text, isError)
	}

	_, task = createTask(t, onA, map[string]any{"name": "ask_human", "args": map[string]any{"question": "Roll back?", "interaction_type": "approval"}})
	id = task["taskId"].(string)
	if got := onB.do(taskOp("cancelTask", id)); got["status"] != mcpserver.TaskCancelled {
		t.Errorf("tasks/cancel on B: %v, want cancelled", got)
	}
	if got := onA.do(taskOp("getTask", id)); got["status"] != mcpserver.TaskCancelled {
		t.Errorf("tasks/get on A after the cancel on B: %v, want cancelled", got)
	}
}

// TestTaskExtTasksClient: the Tasks extension package's requester
// (@modelcontextprotocol/ext-tasks over the SDK 2 client) runs ask_human
// as a task, settles it with the person's answer, and cancels a task.
func TestTaskExtTasksClient(t *testing.T) {
	t.Parallel()
	s := startTaskServer(t, hitltest.DB{})
	a := startScript(t, mcptest.TasksAgentScript, s.URL+"/mcp", s.tokenA)
	ctx := context.Background()

	call := a.Send(map[string]any{"op": "call", "name": "ask_human", "args": map[string]any{"question": "Merge it?", "interaction_type": "approval"}})
	handle := a.Await(func(m map[string]any) bool { return m["event"] == "handle" && m["id"] == float64(call) })
	h, _ := handle["handle"].(map[string]any)
	id, _ := h["taskId"].(string)
	if id == "" {
		t.Fatalf("the call did not run as a task: %v", handle)
	}
	if in, err := s.Broker.Get(ctx, id); err != nil || in.Status != hitl.StatusPending {
		t.Fatalf("the task's interaction: %v, %v", in, err)
	}
	if _, err := s.person.Respond(ctx, id, json.RawMessage(`true`)); err != nil {
		t.Fatal(err)
	}
	outcome, err := a.Reply(call)
	if err != "" {
		t.Fatalf("settle: %s", err)
	}
	if outcome["status"] != mcpserver.TaskCompleted {
		t.Fatalf("outcome %v, want completed", outcome)
	}
	if text, isError := mcptest.TaskResultText(t, outcome["result"].(map[string]any), id); isError || !strings.HasPrefix(text, "Approved (value true).") {
		t.Errorf("settled result %q (isError %v), want the approval", text, isError)
	}

	call = a.Send(map[string]any{"op": "call", "name": "ask_human", "args": map[string]any{"question": "Revert it?", "interaction_type": "approval"}})
	handle = a.Await(func(m map[string]any) bool { return m["event"] == "handle" && m["id"] == float64(call) })
	id, _ = handle["handle"].(map[string]any)["taskId"].(string)
	if _, err := a.Reply(a.Send(map[string]any{"op": "cancel", "taskId": id})); err != "" {
		t.Fatalf("cancel: %s", err)
	}
	if outcome, _ := a.Reply(call); outcome["status"] != mcpserver.TaskCancelled {
		t.Errorf("outcome after the cancel: %v, want cancelled", outcome)
	}
	if in, err := s.Broker.Get(ctx, id); err != nil || in.Status != hitl.StatusCancelled || in.Result.Reason != mcpserver.TaskCancelReason {
		t.Errorf("the interaction after the cancel: %+v, %v", in, err)
	}
}
