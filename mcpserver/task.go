package mcpserver

import (
	"fmt"
	"time"

	"github.com/hitl-sh/hitl"
)

// MCP tasks (protocol revision 2025-11-25, "tasks"): an agent that calls
// an asking tool with a task (params.task) gets the task at once and
// collects the tool's usual result later with tasks/result, from any
// connection, after a restart, on any replica. A task is a hitl
// interaction: its task id is the interaction id, and what makes the
// interaction a task, and whose, is kept in its metadata (TaskMetadataKey),
// so nothing about a task lives in a process.

// TaskMetadataKey is the metadata key that marks an interaction as an MCP
// task: {"tool": the tool called, "owner": the caller that called it}.
const TaskMetadataKey = "mcp_task"

// DefaultTaskPollInterval is how often a task suggests the client poll
// tasks/get.
const DefaultTaskPollInterval = 5 * time.Second

// Task statuses, as the protocol names them.
const (
	TaskWorking   = "working"
	TaskCompleted = "completed"
	TaskFailed    = "failed"
	TaskCancelled = "cancelled"
)

// Task is a task as the protocol sends it (tasks/get, tasks/cancel,
// tasks/list, notifications/tasks/status, and the task of a
// CreateTaskResult).
type Task struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	// TTL is how long after its creation the task can be read, in
	// milliseconds: its question's lifetime, plus the server's retention
	// of ended questions when known; null when the server keeps them all.
	TTL          *int64 `json:"ttl"`
	PollInterval int64  `json:"pollInterval,omitempty"`
}

// taskMark is what TaskMetadataKey holds.
type taskMark struct {
	Tool  string `json:"tool"`
	Owner string `json:"owner"`
}

// markOf returns the task mark of in, and whether it has one.
func markOf(in *hitl.Interaction) (taskMark, bool) {
	m, ok := in.Metadata[TaskMetadataKey].(map[string]any)
	if !ok {
		return taskMark{}, false
	}
	tool, _ := m["tool"].(string)
	owner, _ := m["owner"].(string)
	return taskMark{Tool: tool, Owner: owner}, tool != ""
}

// withMark returns metadata with the task mark added.
func withMark(metadata map[string]any, mark taskMark) map[string]any {
	out := make(map[string]any, len(metadata)+1)
	for k, v := range metadata {
		out[k] = v
	}
	out[TaskMetadataKey] = map[string]any{"tool": mark.Tool, "owner": mark.Owner}
	return out
}

// taskOf returns the task that in is, on a server that keeps ended
// questions for retention (see Options.TaskRetention). A pending question is working: a
// person is being asked in hitl, and the client has nothing to provide
// (input_required would tell it to call tasks/result to be asked
// something, and hold a connection open for nothing). An answer is
// completed (a rejection too: it is an answer), an expired question
// failed and a cancelled one cancelled, each with the reason.
func taskOf(in *hitl.Interaction, poll, retention time.Duration) *Task {
	t := &Task{
		TaskID:        in.ID,
		CreatedAt:     in.CreatedAt.UTC().Format(time.RFC3339Nano),
		LastUpdatedAt: in.CreatedAt.UTC().Format(time.RFC3339Nano),
	}
	if !in.Deadline.IsZero() && retention >= 0 {
		ttl := (in.Deadline.Sub(in.CreatedAt) + retention).Milliseconds()
		t.TTL = &ttl
	}
	if in.Result != nil && !in.Result.RespondedAt.IsZero() {
		t.LastUpdatedAt = in.Result.RespondedAt.UTC().Format(time.RFC3339Nano)
	}
	reason := ""
	if in.Result != nil {
		reason = in.Result.Reason
	}
	switch in.Status {
	case hitl.StatusPending:
		t.Status = TaskWorking
		t.StatusMessage = fmt.Sprintf("waiting for a person to answer in hitl (until %s)", in.Deadline.UTC().Format(time.RFC3339))
		t.PollInterval = poll.Milliseconds()
	case hitl.StatusAnswered:
		t.Status = TaskCompleted
		if in.Result != nil && in.Result.RespondedBy != "" {
			t.StatusMessage = fmt.Sprintf("answered by %s via %s", in.Result.RespondedBy, in.Result.Channel)
		}
		if in.Result != nil && in.Result.TimedOut {
			t.StatusMessage = "nobody answered before the deadline; the default response applies"
		}
	case hitl.StatusExpired:
		t.Status = TaskFailed
		t.StatusMessage = "nobody answered before the deadline (" + in.Deadline.UTC().Format(time.RFC3339) + ")"
		if reason != "" {
			t.StatusMessage += ": " + reason
		}
	case hitl.StatusCancelled:
		t.Status = TaskCancelled
		t.StatusMessage = "the question was cancelled"
		if reason != "" {
			t.StatusMessage += ": " + reason
		}
	default:
		t.Status = TaskFailed
		t.StatusMessage = fmt.Sprintf("the question is in an unknown state %q", in.Status)
	}
	return t
}
