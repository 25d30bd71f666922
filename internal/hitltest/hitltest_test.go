package hitltest_test

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
)

// TestRestart creates an interaction, restarts the server, and expects it
// at the same URL, on the same file, behind the same wrap.
func TestRestart(t *testing.T) {
	t.Parallel()
	var requests atomic.Int64
	first := hitltest.Start(t, &hitltest.Options{Wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			requests.Add(1)
			h.ServeHTTP(w, r)
		})
	}})
	in, _, err := hitltest.NewClient(t, first.URL, nil).Create(context.Background(), hitl.CreateRequest{Question: "still here?"})
	if err != nil {
		t.Fatalf("create: %v", err)
	}

	second := first.Restart(t)
	first.Stop() // a second Stop does nothing
	if second.URL != first.URL {
		t.Errorf("restarted at %s, want %s", second.URL, first.URL)
	}
	got, err := hitltest.NewClient(t, second.URL, nil).Get(context.Background(), in.ID)
	if err != nil {
		t.Fatalf("get after restart: %v", err)
	}
	if got.Question != in.Question {
		t.Errorf("question = %q, want %q", got.Question, in.Question)
	}
	if got, want := requests.Load(), int64(2); got != want {
		t.Errorf("wrap saw %d requests, want %d", got, want)
	}
}

// TestStartBroker answers on an in-process engine.
func TestStartBroker(t *testing.T) {
	t.Parallel()
	b := hitltest.StartBroker(t)
	in, _, err := b.Create(context.Background(), hitl.CreateRequest{Question: "anyone?"})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if in.Status != hitl.StatusPending {
		t.Errorf("status = %q, want pending", in.Status)
	}
}

// TestLogSignal signals on the one message it waits for.
func TestLogSignal(t *testing.T) {
	t.Parallel()
	h := hitltest.NewLogSignal("wanted")
	log := slog.New(h)
	log.Info("other")
	log.Warn("wanted", "n", 1)
	if got := len(h.C); got != 1 {
		t.Errorf("%d signals, want 1", got)
	}
}
