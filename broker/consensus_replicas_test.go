package broker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/postgres"
	"github.com/hitl-sh/hitl/postgres/pgtest"
)

// TestConsensusFiftyVotesOnTwoReplicas: 50 people each vote twice at
// once, once on each of two replicas sharing a PostgreSQL schema, on a
// quorum of 30 approvals. The decision is made once; each person's vote
// counts once; nobody gets a 200 for a vote that was not counted.
func TestConsensusFiftyVotesOnTwoReplicas(t *testing.T) {
	schema := pgtest.Name(t)
	var (
		brokers []*broker.Broker
		stores  []*postgres.Store
	)
	for range 2 {
		b, store := openReplica(t, schema, 8)
		brokers, stores = append(brokers, b), append(stores, store)
	}
	const n = 50
	ids := stores[0]
	for i := range n {
		if err := ids.CreateUser(context.Background(), &hitl.User{Name: fmt.Sprintf("p%02d", i), Groups: []string{"sre"}}); err != nil {
			t.Fatal(err)
		}
	}
	in := ask(t, brokers[0], hitl.CreateRequest{Type: hitl.TypeApproval, Targets: &hitl.Targets{Groups: []string{"sre"}},
		Consensus: &hitl.Consensus{Mode: hitl.ModeQuorum, Required: 30}})
	if in.VotesNeeded != 30 || in.Status != hitl.StatusPending {
		t.Fatalf("created: %s, needs %d", in.Status, in.VotesNeeded)
	}
	type outcome struct {
		who     string
		status  hitl.Status
		code    string
		decided bool
	}
	results := make(chan outcome, 2*n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 2 * n {
		wg.Go(func() {
			who := fmt.Sprintf("p%02d", i%n)
			ctx := hitl.WithCaller(context.Background(), hitl.Caller{Name: who, Channel: hitl.ChannelWeb, Role: hitl.RoleResponder, Groups: []string{"sre"}})
			<-start
			out, err := brokers[i%2].Respond(ctx, in.ID, json.RawMessage(`true`))
			o := outcome{who: who, code: hitl.ErrorCode(err)}
			if err == nil {
				o.status = out.Status
				o.decided = out.Status == hitl.StatusAnswered
			}
			results <- o
		})
	}
	close(start)
	wg.Wait()
	close(results)
	accepted := map[string]int{}
	decided := 0
	for o := range results {
		switch o.code {
		case "":
			accepted[o.who]++
			if o.decided {
				decided++
			}
		case hitl.ECONFLICT:
		default:
			t.Errorf("%s: error %s", o.who, o.code)
		}
	}
	for who, k := range accepted {
		if k != 1 {
			t.Errorf("%s: %d votes accepted, want 1", who, k)
		}
	}
	if len(accepted) != 30 || decided != 1 {
		t.Errorf("%d votes accepted, %d decided; want 30 and 1", len(accepted), decided)
	}
	got, err := brokers[1].Wait(context.Background(), in.ID)
	if err != nil || got.Status != hitl.StatusAnswered || len(got.Result.Votes) != 30 {
		t.Fatalf("decided: %+v, %v", got, err)
	}
	for _, v := range got.Result.Votes {
		if accepted[v.By] != 1 {
			t.Errorf("vote by %s in the result was not accepted", v.By)
		}
	}
	evs, err := stores[0].Events(context.Background(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	count := map[hitl.EventType]int{}
	for _, ev := range evs {
		if ev.InteractionID == in.ID {
			count[ev.Type]++
		}
	}
	if count[hitl.EventVoted] != 30 || count[hitl.EventAnswered] != 1 {
		t.Errorf("events: %v; want 30 voted and 1 answered", count)
	}
}
