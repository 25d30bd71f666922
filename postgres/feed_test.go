package postgres_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/postgres"
	"github.com/hitl-sh/hitl/postgres/pgtest"
	"github.com/jackc/pgx/v5"
)

// startBroker starts a broker over s, closed when the test ends.
func startBroker(t testing.TB, s *postgres.Store) *broker.Broker {
	t.Helper()
	b := broker.New(s, nil)
	if err := b.Start(context.Background()); err != nil {
		t.Fatalf("start broker: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// next returns the subscription's next event.
func next(t *testing.T, sub *broker.Subscription) *hitl.Event {
	t.Helper()
	select {
	case ev, ok := <-sub.C():
		if !ok {
			t.Fatalf("subscription closed: %v", sub.Err())
		}
		return ev
	case <-time.After(15 * time.Second):
		t.Fatal("no event in 15s")
	}
	return nil
}

// otherReplica opens a transaction that appends an event for id and
// leaves it open, as another replica's write still committing: the event
// has its sequence number but is not in the log yet.
func otherReplica(t *testing.T, schema, id string) (pgx.Tx, int64) {
	t.Helper()
	c := pgtest.Connect(t)
	if _, err := c.Exec(t.Context(), "SET search_path TO "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	tx, err := c.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var seq int64
	err = tx.QueryRow(t.Context(), `INSERT INTO events (type, interaction_id, at, actor, channel)
		VALUES ('notified', $1, now(), 'bob', 'slack') RETURNING seq`, id).Scan(&seq)
	if err != nil {
		t.Fatal(err)
	}
	return tx, seq
}

// TestFeedWaitsForEarlierCommit has another replica take a sequence
// number, then commits a later event here: subscribers get both, in
// sequence order, once the earlier one commits.
func TestFeedWaitsForEarlierCommit(t *testing.T) {
	t.Parallel()
	schema := pgtest.Name(t)
	b := startBroker(t, open(t, schema, nil))
	sub := b.Subscribe()
	defer sub.Close()
	in, _, err := b.Create(t.Context(), hitl.CreateRequest{Question: "Deploy?"})
	if err != nil {
		t.Fatal(err)
	}
	if ev := next(t, sub); ev.Type != hitl.EventCreated {
		t.Fatalf("got %s event, want created", ev.Type)
	}

	tx, earlier := otherReplica(t, schema, in.ID)
	later, err := b.AppendEvent(t.Context(), &hitl.Event{Type: hitl.EventNotified, InteractionID: in.ID, Channel: "web"})
	if err != nil {
		t.Fatal(err)
	}
	if later.Seq != earlier+1 {
		t.Fatalf("got sequence numbers %d then %d, want consecutive", earlier, later.Seq)
	}
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []int64{earlier, later.Seq} {
		if got := next(t, sub).Seq; got != want {
			t.Fatalf("got event %d, want %d", got, want)
		}
	}
}

// TestFeedSkipsRolledBack has another replica take a sequence number and
// roll back: the later event still arrives.
func TestFeedSkipsRolledBack(t *testing.T) {
	t.Parallel()
	schema := pgtest.Name(t)
	b := startBroker(t, open(t, schema, nil))
	sub := b.Subscribe()
	defer sub.Close()
	in, _, err := b.Create(t.Context(), hitl.CreateRequest{Question: "Deploy?"})
	if err != nil {
		t.Fatal(err)
	}
	next(t, sub)

	tx, _ := otherReplica(t, schema, in.ID)
	later, err := b.AppendEvent(t.Context(), &hitl.Event{Type: hitl.EventNotified, InteractionID: in.ID})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got, want := next(t, sub).Seq, later.Seq; got != want {
		t.Fatalf("got event %d, want %d", got, want)
	}
}

// TestWaiterWokenByOtherBroker answers on one broker while an agent waits
// on another over the same database.
func TestWaiterWokenByOtherBroker(t *testing.T) {
	t.Parallel()
	schema := pgtest.Name(t)
	a := startBroker(t, open(t, schema, nil))
	b := startBroker(t, open(t, schema, nil))
	in, _, err := a.Create(t.Context(), hitl.CreateRequest{Type: hitl.TypeApproval, Question: "Ship?"})
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		in  *hitl.Interaction
		err error
	}
	done := make(chan result, 1)
	go func() {
		got, err := a.Wait(t.Context(), in.ID)
		done <- result{got, err}
	}()
	select {
	case <-a.WaitStarted(in.ID):
	case <-time.After(15 * time.Second):
		t.Fatal("timed out waiting for the agent to wait on A")
	}
	if _, err := b.Respond(t.Context(), in.ID, []byte(`true`)); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.err != nil || r.in.Status != hitl.StatusAnswered {
			t.Fatalf("Wait: got %v, %v; want answered", r.in, r.err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the waiter on the other broker was not woken in 15s")
	}
}

// TestWaitsStartingAsOtherBrokerAnswersAreWoken starts waits on one broker
// one after another, without pause, while another broker records the
// answer, until one returns it: every wait must return the answer. A wait
// that read the interaction as still pending just after the event woke
// this broker's waiters would be woken by nothing.
func TestWaitsStartingAsOtherBrokerAnswersAreWoken(t *testing.T) {
	t.Parallel()
	schema := pgtest.Name(t)
	a := startBroker(t, open(t, schema, nil))
	b := startBroker(t, open(t, schema, nil))
	for round := range 20 {
		in, _, err := a.Create(t.Context(), hitl.CreateRequest{Type: hitl.TypeApproval, Question: "Ship?"})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		var (
			wg       sync.WaitGroup
			answered atomic.Bool
			stuck    atomic.Int32
		)
		wg.Go(func() {
			for n := 0; !answered.Load() && n < 5000; n++ {
				wg.Go(func() {
					got, err := a.Wait(ctx, in.ID)
					if err == nil && got.Status == hitl.StatusAnswered {
						answered.Store(true)
					} else {
						stuck.Add(1)
					}
				})
				runtime.Gosched()
			}
		})
		if _, err := b.Respond(t.Context(), in.ID, []byte(`true`)); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		cancel()
		if n := stuck.Load(); n > 0 || !answered.Load() {
			t.Fatalf("round %d: %d waits were not woken by the answer", round, n)
		}
	}
}
