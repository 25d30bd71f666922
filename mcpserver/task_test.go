package mcpserver

import (
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
)

func TestTaskOf(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	pending := func() *hitl.Interaction {
		return &hitl.Interaction{ID: "i1", Status: hitl.StatusPending, CreatedAt: created, Deadline: created.Add(10 * time.Minute)}
	}
	ended := func(status hitl.Status, r *hitl.Result) *hitl.Interaction {
		in := pending()
		in.Status, in.Result = status, r
		return in
	}
	answeredAt := created.Add(time.Minute)
	for _, tt := range []struct {
		name    string
		in      *hitl.Interaction
		status  string
		message string
	}{
		{"pending", pending(), TaskWorking, "waiting for a person to answer in hitl (until 2026-07-01T12:10:00Z)"},
		{"answered", ended(hitl.StatusAnswered, &hitl.Result{RespondedBy: "alice", Channel: "slack", RespondedAt: answeredAt}), TaskCompleted, "answered by alice via slack"},
		{"default at the deadline", ended(hitl.StatusAnswered, &hitl.Result{TimedOut: true, RespondedAt: answeredAt}), TaskCompleted, "nobody answered before the deadline; the default response applies"},
		{"expired", ended(hitl.StatusExpired, &hitl.Result{RespondedAt: answeredAt}), TaskFailed, "nobody answered before the deadline (2026-07-01T12:10:00Z)"},
		{"cancelled", ended(hitl.StatusCancelled, &hitl.Result{Reason: TaskCancelReason, RespondedAt: answeredAt}), TaskCancelled, "the question was cancelled: " + TaskCancelReason},
	} {
		got := taskOf(tt.in, 2*time.Second, 0)
		if got.TaskID != "i1" || got.Status != tt.status || got.StatusMessage != tt.message {
			t.Errorf("%s: %s %q, want %s %q", tt.name, got.Status, got.StatusMessage, tt.status, tt.message)
		}
		wantPoll := int64(0) // an ended task is not polled
		if tt.status == TaskWorking {
			wantPoll = 2000
		}
		if got.PollInterval != wantPoll {
			t.Errorf("%s: pollInterval %d, want %d", tt.name, got.PollInterval, wantPoll)
		}
		wantUpdated := "2026-07-01T12:01:00Z"
		if tt.in.Status == hitl.StatusPending {
			wantUpdated = "2026-07-01T12:00:00Z"
		}
		if got.CreatedAt != "2026-07-01T12:00:00Z" || got.LastUpdatedAt != wantUpdated {
			t.Errorf("%s: createdAt %s, lastUpdatedAt %s, want 2026-07-01T12:00:00Z, %s", tt.name, got.CreatedAt, got.LastUpdatedAt, wantUpdated)
		}
	}
}

func TestTaskTTLFromRetention(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	in := &hitl.Interaction{ID: "i1", Status: hitl.StatusPending, CreatedAt: created, Deadline: created.Add(10 * time.Minute)}
	for _, tt := range []struct {
		retention time.Duration
		want      *int64
	}{
		{0, ptr(int64(600_000))},
		{time.Hour, ptr(int64(600_000 + 3_600_000))},
		{KeepForever, nil},
	} {
		got := taskOf(in, time.Second, tt.retention).TTL
		switch {
		case tt.want == nil && got != nil:
			t.Errorf("retention %v: ttl %d, want null", tt.retention, *got)
		case tt.want != nil && (got == nil || *got != *tt.want):
			t.Errorf("retention %v: ttl %v, want %d", tt.retention, got, *tt.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }
