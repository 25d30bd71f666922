package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/ask"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/internal/hitltest"
)

// The tests of Ask run ask.Ask over the client: the agent's whole
// question, from create through the long-polls to the cancel when its
// context ends, as an agent of a remote server makes it.

func TestAskAnswered(t *testing.T) {
	t.Parallel()
	ts := hitltest.Start(t, nil)
	c := hitltest.NewClient(t, ts.URL, nil)

	done := make(chan waitResult, 1)
	go func() {
		in, err := ask.Ask(context.Background(), c, hitl.CreateRequest{
			Type: hitl.TypeMultiChoice, Question: "Which files?", Options: hitl.OptionList{{Label: "a.go"}, {Label: "b.go"}},
		})
		done <- waitResult{in, err}
	}()
	hitltest.WaitFor(t, "the agent to wait", func() bool { return ts.Broker.Waiting() == 1 })
	pending, _, err := c.List(context.Background(), hitl.ListFilter{Status: hitl.StatusPending})
	if err != nil || len(pending) != 1 {
		t.Fatalf("list pending: %d interactions, err %v; want 1", len(pending), err)
	}
	if _, err := c.Respond(context.Background(), pending[0].ID, json.RawMessage(`"b.go, a.go"`)); err != nil {
		t.Fatalf("respond: %v", err)
	}
	r := receive(t, done, 10*time.Second)
	if r.err != nil {
		t.Fatalf("ask: %v", r.err)
	}
	if got, want := string(r.in.Result.Value), `["b_go","a_go"]`; got != want {
		t.Errorf("value = %s, want %s", got, want)
	}
}

func TestAskExpired(t *testing.T) {
	t.Parallel()
	ts := hitltest.Start(t, nil)
	c := hitltest.NewClient(t, ts.URL, nil)
	in, err := ask.Ask(context.Background(), c, hitl.CreateRequest{Question: "anyone?", Timeout: 0.05})
	if !errors.Is(err, hitl.ErrExpired) {
		t.Fatalf("ask: %v, want an error matching hitl.ErrExpired", err)
	}
	if in == nil {
		t.Fatal("ask returned no interaction, want the expired one")
	}
	if got, want := in.Status, hitl.StatusExpired; got != want {
		t.Errorf("status = %q, want %q", got, want)
	}
}

func TestAskCancelledContextCancelsInteraction(t *testing.T) {
	t.Parallel()
	ts := hitltest.Start(t, nil)
	c := hitltest.NewClient(t, ts.URL, nil)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan waitResult, 1)
	go func() {
		in, err := ask.Ask(ctx, c, hitl.CreateRequest{Type: hitl.TypeApproval, Question: "Drop the table?"})
		done <- waitResult{in, err}
	}()
	hitltest.WaitFor(t, "the agent to wait", func() bool { return ts.Broker.Waiting() == 1 })
	cancel()

	r := receive(t, done, 10*time.Second)
	if !errors.Is(r.err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", r.err)
	}
	if r.in == nil {
		t.Fatal("ask returned no interaction, want the cancelled one")
	}
	got, err := c.Get(context.Background(), r.in.ID)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.Status != hitl.StatusCancelled {
		t.Fatalf("status on the server = %q, want cancelled", got.Status)
	}
	if got, want := got.Result.Reason, hitl.CancelledByAgent; got != want {
		t.Errorf("reason = %q, want %q", got, want)
	}
}

func TestAskCancelledDuringCreate(t *testing.T) {
	t.Parallel()
	created := make(chan struct{})
	var creates atomic.Int32
	ts := hitltest.Start(t, &hitltest.Options{Wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r)
			if r.Method == http.MethodPost && r.URL.Path == "/api/v1/interactions" && creates.Add(1) == 1 {
				// The interaction exists, but the agent never hears so.
				close(created)
				<-r.Context().Done()
			}
		})
	}})
	c := hitltest.NewClient(t, ts.URL, nil)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan waitResult, 1)
	go func() {
		in, err := ask.Ask(ctx, c, hitl.CreateRequest{Question: "lost?", IdempotencyKey: "lost-1"})
		done <- waitResult{in, err}
	}()
	<-created
	cancel()
	r := receive(t, done, 10*time.Second)
	if !errors.Is(r.err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", r.err)
	}
	list, _, err := c.List(context.Background(), hitl.ListFilter{IdempotencyKey: "lost-1"})
	if err != nil || len(list) != 1 {
		t.Fatalf("list by key: %d interactions, err %v; want 1", len(list), err)
	}
	if got := list[0].Status; got != hitl.StatusCancelled {
		t.Errorf("status = %q, want cancelled", got)
	}
}

// TestWaitSurvivesRestart stops the server while an agent waits, starts a
// new one on the same SQLite file and address, answers there, and expects
// the original Wait to return the answer.
func TestWaitSurvivesRestart(t *testing.T) {
	t.Parallel()
	first := hitltest.Start(t, nil)
	logs := hitltest.NewLogSignal("wait failed; retrying")
	c := hitltest.NewClient(t, first.URL, &client.Options{Logger: slog.New(logs)})
	in := mustCreate(t, c, hitl.CreateRequest{Type: hitl.TypeFreeText, Question: "Still there after a restart?"})

	done := make(chan waitResult, 1)
	go func() {
		got, err := c.Wait(context.Background(), in.ID)
		done <- waitResult{got, err}
	}()
	hitltest.WaitFor(t, "the long-poll to reach the first server", func() bool { return first.Broker.Waiting() == 1 })
	first.Stop()
	select {
	case r := <-done:
		t.Fatalf("wait returned while the server was down: %v, %v", r.in, r.err)
	default:
	}
	// Start the new server only once the agent has found the old one gone.
	select {
	case <-logs.C:
	case <-time.After(10 * time.Second):
		t.Fatal("wait never reported the server unreachable")
	}

	second := first.Restart(t)
	if second.URL != first.URL {
		t.Fatalf("restarted at %s, want %s", second.URL, first.URL)
	}
	if _, err := hitltest.NewClient(t, second.URL, nil).Respond(context.Background(), in.ID, json.RawMessage(`"yes, still here"`)); err != nil {
		t.Fatalf("respond on the second server: %v", err)
	}

	r := receive(t, done, 30*time.Second)
	if r.err != nil {
		t.Fatalf("wait: %v", r.err)
	}
	if got, want := r.in.ID, in.ID; got != want {
		t.Errorf("id = %q, want %q", got, want)
	}
	if got, want := string(r.in.Result.Value), `"yes, still here"`; got != want {
		t.Errorf("value = %s, want %s", got, want)
	}
}
