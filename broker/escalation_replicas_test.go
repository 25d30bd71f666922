package broker_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/postgres"
	"github.com/hitl-sh/hitl/postgres/pgtest"
)

// TestEscalationOnceOnTwoReplicas: two replicas share a PostgreSQL
// schema, each asks ten questions with two reminders; every step fires
// once in all, on one replica or the other, and the log has one event
// per step.
func TestEscalationOnceOnTwoReplicas(t *testing.T) {
	schema := pgtest.Name(t)
	var (
		mu    sync.Mutex
		fired = map[string]int{} // "interaction/step" → times fired
		total int
	)
	var brokers []*broker.Broker
	for i := range 2 {
		store, err := postgres.Open(context.Background(), pgtest.DSN(), &postgres.Options{Schema: schema, MaxConns: 4})
		if err != nil {
			t.Fatalf("open replica %d: %v", i, err)
		}
		b := broker.New(store, nil)
		if err := b.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		b.OnEscalation(func(_ context.Context, ev *hitl.Event) {
			d, err := hitl.ParseEscalationDetail(ev)
			if err != nil {
				t.Errorf("detail %q: %v", ev.Detail, err)
			}
			mu.Lock()
			defer mu.Unlock()
			fired[ev.InteractionID+"/"+string(rune('0'+d.Step))]++
			total++
		})
		t.Cleanup(func() {
			b.Close()
			store.Close()
		})
		brokers = append(brokers, b)
	}
	var ids []string
	for i := range 20 {
		in := ask(t, brokers[i%2], hitl.CreateRequest{Question: "Deploy?", Timeout: 600, Escalation: []hitl.EscalationStep{
			{After: "1s", Remind: true}, {After: "2s", Remind: true},
		}})
		ids = append(ids, in.ID)
	}
	const want = 40
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := total
		mu.Unlock()
		if n >= want || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond) // polling a count another goroutine sets; no signal to wait on across replicas
	}
	time.Sleep(time.Second) // room for a second firing, which must not come
	mu.Lock()
	defer mu.Unlock()
	if total != want || len(fired) != want {
		t.Fatalf("fired %d times, %d distinct steps; want %d, once each", total, len(fired), want)
	}
	for _, id := range ids {
		evs, err := brokers[0].Timeline(context.Background(), id, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		reminded := 0
		for _, ev := range evs {
			if ev.Type == hitl.EventReminded {
				reminded++
			}
		}
		if reminded != 2 {
			t.Errorf("interaction %s: %d reminded events, want 2", id, reminded)
		}
	}
}
