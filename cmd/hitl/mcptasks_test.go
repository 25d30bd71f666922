package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/mcptest"
	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/mcpserver"
)

// The official TypeScript SDK's client (agent.mjs, its experimental task
// client) runs hitl's asking tools as MCP tasks against the real binary.

// taskArgs is an approval asked as a task.
var taskArgs = map[string]any{"question": "Ship the release?", "interaction_type": "approval"}

// startTask creates a task of ask_human and returns its id.
func startTask(t *testing.T, a *tsAgent) string {
	t.Helper()
	task := a.Outcome(a.Send(map[string]any{"op": "task", "name": "ask_human", "args": taskArgs}))
	id, _ := task["taskId"].(string)
	if id == "" || task["status"] != mcpserver.TaskWorking {
		t.Fatalf("created task %v: want a working task with an id", task)
	}
	return id
}

// awaitTaskStatus waits for the agent's next status notification of task
// id and checks its status.
func awaitTaskStatus(t *testing.T, a *tsAgent, id, want string) {
	t.Helper()
	note := a.Await(func(m map[string]any) bool {
		p, _ := m["params"].(map[string]any)
		return m["event"] == "taskStatus" && p["taskId"] == id
	})
	if p := note["params"].(map[string]any); p["status"] != want {
		t.Errorf("status notification %v: want %s", p, want)
	}
}

// TestMCPTaskSurvivesRestart: a task created over /mcp of hitl serve on a
// SQLite file is answered after the server restarts, and a new client
// connection reads its status and result.
func TestMCPTaskSurvivesRestart(t *testing.T) {
	requireGatePackages(t)
	addr, db := freeAddr(t), filepath.Join(t.TempDir(), "hitl.db")
	first := startServerAt(t, addr, db)
	a := startAgent(t, nil, first.URL+"/mcp")
	created := a.Outcome(a.Send(map[string]any{"op": "task", "name": "ask_human", "args": taskArgs}))
	id, _ := created["taskId"].(string)
	// The task can be read for the question's lifetime (300 s by default)
	// and the server's retention of ended questions (90 days by default).
	if want := float64((300*time.Second + 90*24*time.Hour).Milliseconds()); created["ttl"] != want {
		t.Errorf("ttl %v, want %v", created["ttl"], want)
	}

	first.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-first.done:
	case <-time.After(15 * time.Second):
		t.Fatal("hitl serve did not stop")
	}
	second := startServerAt(t, addr, db)
	person := second.client(t)
	ctx := hitl.WithCaller(context.Background(), hitl.Caller{Name: "alice", Channel: hitl.ChannelWeb})
	if _, err := person.Respond(ctx, id, json.RawMessage(`true`)); err != nil {
		t.Fatalf("answer after the restart: %v", err)
	}

	b := startAgent(t, nil, second.URL+"/mcp")
	if got := b.Outcome(b.Send(map[string]any{"op": "getTask", "taskId": id})); got["status"] != mcpserver.TaskCompleted {
		t.Errorf("tasks/get after the restart: %v, want completed", got)
	}
	text, isError := mcptest.TaskResultText(t, b.Outcome(b.Send(map[string]any{"op": "taskResult", "taskId": id})), id)
	if isError || !strings.HasPrefix(text, "Approved (value true).") {
		t.Errorf("tasks/result after the restart: %q (isError %v), want the approval", text, isError)
	}
}

// TestMCPTaskResultHeldOpen: a tasks/result held open on hitl serve for
// more than a minute — past the 30 s body deadline and the server's idle
// bounds — while other questions are asked and answered, returns the
// answer given at its end.
func TestMCPTaskResultHeldOpen(t *testing.T) {
	if testing.Short() {
		t.Skip("holds a request open for 65 s")
	}
	turns.Idle(t) // holds a request open for 65 s, most of it waiting
	requireGatePackages(t)
	srv := startServerAt(t, freeAddr(t), filepath.Join(t.TempDir(), "hitl.db"))
	a := startAgent(t, nil, srv.URL+"/mcp")
	id := startTask(t, a)
	waiting := a.Send(map[string]any{"op": "taskResult", "taskId": id})
	person := srv.client(t)
	ctx := context.Background()
	for start := time.Now(); time.Since(start) < 65*time.Second; time.Sleep(5 * time.Second) {
		other, _, err := person.Create(ctx, hitl.CreateRequest{Question: "Meanwhile?", Type: hitl.TypeApproval})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := person.Respond(ctx, other.ID, json.RawMessage(`true`)); err != nil {
			t.Fatal(err)
		}
		if got := a.Outcome(a.Send(map[string]any{"op": "getTask", "taskId": id})); got["status"] != mcpserver.TaskWorking {
			t.Fatalf("tasks/get while held: %v, want working", got)
		}
	}
	if _, err := person.Respond(ctx, id, json.RawMessage(`true`)); err != nil {
		t.Fatal(err)
	}
	text, isError := mcptest.TaskResultText(t, a.Outcome(waiting), id)
	if isError || !strings.HasPrefix(text, "Approved (value true).") {
		t.Errorf("tasks/result held for 65 s: %q (isError %v), want the approval", text, isError)
	}
}

// TestMCPTaskStdio: over hitl mcp's stdio a task is created at once, the
// client is told when it ends (notifications/tasks/status), its result is
// the tool's, and tasks/cancel withdraws a question with the reason.
func TestMCPTaskStdio(t *testing.T) {
	requireGatePackages(t)
	srv := startServer(t)
	a := startAgent(t, []string{"HITL_URL=" + srv.URL}, hitlBin, "mcp")
	person := srv.client(t)
	ctx := context.Background()

	id := startTask(t, a)
	if got := a.Outcome(a.Send(map[string]any{"op": "getTask", "taskId": id})); got["status"] != mcpserver.TaskWorking {
		t.Errorf("tasks/get: %v, want working", got)
	}
	if _, err := person.Respond(ctx, id, json.RawMessage(`false`)); err != nil {
		t.Fatalf("answer: %v", err)
	}
	awaitTaskStatus(t, a, id, mcpserver.TaskCompleted)
	text, isError := mcptest.TaskResultText(t, a.Outcome(a.Send(map[string]any{"op": "taskResult", "taskId": id})), id)
	if isError || !strings.HasPrefix(text, "Rejected (value false).") {
		t.Errorf("tasks/result: %q (isError %v), want the rejection", text, isError)
	}

	id = startTask(t, a)
	cancelled := a.Outcome(a.Send(map[string]any{"op": "cancelTask", "taskId": id}))
	if cancelled["status"] != mcpserver.TaskCancelled {
		t.Errorf("tasks/cancel: %v, want cancelled", cancelled)
	}
	in, err := person.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if in.Status != hitl.StatusCancelled || in.Result == nil || in.Result.Reason != mcpserver.TaskCancelReason {
		t.Errorf("interaction after tasks/cancel: %s %+v, want cancelled with %q", in.Status, in.Result, mcpserver.TaskCancelReason)
	}
	text, isError = mcptest.TaskResultText(t, a.Outcome(a.Send(map[string]any{"op": "taskResult", "taskId": id})), id)
	if !isError || !strings.Contains(text, mcpserver.TaskCancelReason) {
		t.Errorf("tasks/result of a cancelled task: %q (isError %v), want an error with the reason", text, isError)
	}
}

// TestMCPTaskStdioAcrossRestart: hitl mcp keeps serving a task while the
// server it talks to restarts: the answer given after the restart reaches
// the client as a status notification and as the task's result.
func TestMCPTaskStdioAcrossRestart(t *testing.T) {
	requireGatePackages(t)
	addr, db := freeAddr(t), filepath.Join(t.TempDir(), "hitl.db")
	first := startServerAt(t, addr, db)
	a := startAgent(t, []string{"HITL_URL=" + first.URL}, hitlBin, "mcp")
	id := startTask(t, a)

	first.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-first.done:
	case <-time.After(15 * time.Second):
		t.Fatal("hitl serve did not stop")
	}
	second := startServerAt(t, addr, db)
	if _, err := second.client(t).Respond(context.Background(), id, json.RawMessage(`true`)); err != nil {
		t.Fatalf("answer after the restart: %v", err)
	}
	awaitTaskStatus(t, a, id, mcpserver.TaskCompleted)
	text, isError := mcptest.TaskResultText(t, a.Outcome(a.Send(map[string]any{"op": "taskResult", "taskId": id})), id)
	if isError || !strings.HasPrefix(text, "Approved (value true).") {
		t.Errorf("tasks/result: %q (isError %v), want the approval", text, isError)
	}
}
