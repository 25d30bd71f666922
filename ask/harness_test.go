package ask_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/internal/hitltest"
)

// env is one way an agent reaches the engine: in process, or over HTTP.
type env struct {
	name   string
	agent  hitl.Service   // what the helpers under test are given
	person hitl.Service   // answers on the web channel
	broker *broker.Broker // the engine behind both
}

// newEnvs returns both ways, each over its own SQLite file.
func newEnvs(t *testing.T) []env {
	t.Helper()
	local := hitltest.StartBroker(t)
	ts := hitltest.Start(t, nil)
	return []env{
		{name: "engine", agent: local, person: asPerson{local}, broker: local},
		{name: "http", agent: hitltest.NewClient(t, ts.URL, nil), person: hitltest.NewClient(t, ts.URL, &client.Options{Channel: hitl.ChannelWeb}), broker: ts.Broker},
	}
}

// asPerson answers and cancels on the engine as a person on the web inbox.
type asPerson struct{ *broker.Broker }

func (p asPerson) Respond(ctx context.Context, id string, v json.RawMessage) (*hitl.Interaction, error) {
	return p.Broker.Respond(hitl.WithCaller(ctx, hitl.Caller{Name: "alice", Channel: hitl.ChannelWeb}), id, v)
}

func (p asPerson) Cancel(ctx context.Context, id string, reason string) (*hitl.Interaction, error) {
	return p.Broker.Cancel(hitl.WithCaller(ctx, hitl.Caller{Name: "alice", Channel: hitl.ChannelWeb}), id, reason)
}

// waiting waits until an agent waits on exactly one pending interaction
// and returns it.
func (e env) waiting(t *testing.T) *hitl.Interaction {
	t.Helper()
	hitltest.WaitFor(t, "the agent to wait", func() bool { return e.broker.Waiting() == 1 })
	list, _, err := e.broker.List(context.Background(), hitl.ListFilter{Status: hitl.StatusPending})
	if err != nil {
		t.Fatalf("list pending: %v", err)
	}
	if len(list) != 1 {
		t.Fatalf("%d pending interactions, want 1", len(list))
	}
	return list[0]
}

// answer waits for the agent's question and answers it with value (JSON).
func (e env) answer(t *testing.T, value string) *hitl.Interaction {
	t.Helper()
	in := e.waiting(t)
	if _, err := e.person.Respond(context.Background(), in.ID, json.RawMessage(value)); err != nil {
		t.Fatalf("respond %s: %v", value, err)
	}
	return in
}

// result is what a helper running in a goroutine returned.
type result[T any] struct {
	v   T
	err error
}

// async runs fn in a goroutine and returns a channel with its result.
func async[T any](fn func() (T, error)) <-chan result[T] {
	ch := make(chan result[T], 1)
	go func() {
		v, err := fn()
		ch <- result[T]{v, err}
	}()
	return ch
}

// receive returns the result sent on ch, failing the test after a bound.
func receive[T any](t *testing.T, ch <-chan result[T]) result[T] {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("no result after 30s")
		return result[T]{}
	}
}
