package broker_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/postgres/pgtest"
)

// ownCounts waits until b's own counts of pending questions are loaded
// and returns them as counts of all pending questions.
func ownCounts(t *testing.T, b *broker.Broker) *hitl.InteractionCounts {
	t.Helper()
	select {
	case <-broker.PendingCountsLoaded(b):
	case <-time.After(30 * time.Second):
		t.Fatal("the broker's counts of pending questions were not loaded within 30 s")
	}
	groups, ok := broker.PendingCounts(b)
	if !ok {
		t.Fatal("counts loaded but not ready")
	}
	return hitl.CountGroups(groups, hitl.ListFilter{Status: hitl.StatusPending})
}

// storeCounts counts the pending questions in the store, without the
// expiring ones (the broker reads those from the store every time).
func storeCounts(t *testing.T, s hitl.Store) *hitl.InteractionCounts {
	t.Helper()
	c, err := s.CountMatching(context.Background(), hitl.ListFilter{Status: hitl.StatusPending}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	c.Expiring = 0
	return c
}

// churn asks questions of several agents and types on b and cancels or
// answers some of them, i being the caller's number.
func churn(ctx context.Context, b *broker.Broker, i, n int) error {
	types := []hitl.Type{hitl.TypeApproval, hitl.TypeFreeText, hitl.TypeSingleChoice}
	for j := range n {
		req := hitl.CreateRequest{Type: types[j%3], Question: fmt.Sprintf("q %d/%d", i, j), Timeout: 3600,
			SourceAgent: fmt.Sprintf("agent-%d", (i+j)%4)}
		if req.Type == hitl.TypeSingleChoice {
			req.Options = []hitl.Option{{Key: "a", Label: "A"}, {Key: "b", Label: "B"}}
		}
		in, _, err := b.Create(ctx, req)
		if err != nil {
			return err
		}
		switch j % 4 {
		case 1:
			_, err = b.Cancel(ctx, in.ID, "churn")
		case 2:
			if in.Type == hitl.TypeApproval {
				_, err = b.Respond(ctx, in.ID, []byte("true"))
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// TestPendingCountsFollowTheEvents: the broker's own counts of pending
// questions, after questions asked and ended on it, are the store's.
func TestPendingCountsFollowTheEvents(t *testing.T) {
	b := newBroker(t, nil)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 4 {
		wg.Go(func() { errs <- churn(ctx, b, i, 40) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := storeCounts(t, broker.StoreOf(b))
	if want.Total == 0 || len(want.ByAgent) != 4 || len(want.ByType) != 3 {
		t.Fatalf("the churn left %+v pending; want some of every agent and type", want)
	}
	if d := cmp.Diff(want, ownCounts(t, b)); d != "" {
		t.Errorf("own counts differ from the store's (-store +own):\n%s", d)
	}
	// Counts answers the agent and type filters from them too.
	f := hitl.ListFilter{Status: hitl.StatusPending, Agents: []string{"agent-1"}, Types: []hitl.Type{hitl.TypeFreeText}}
	got, err := b.Counts(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	sql, err := broker.StoreOf(b).CountMatching(ctx, f, b.Now().Add(hitl.ExpiringWindow))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(sql, got); d != "" {
		t.Errorf("Counts(%+v) differs from the store's (-store +broker):\n%s", f, d)
	}
}

// TestPendingCountsOfAReplicaStartedMidChurn: replicas started while
// another is busy asking and ending questions — their snapshot races the
// events — count every event once: once the churn stops and they have
// caught up, their counts are the store's.
func TestPendingCountsOfAReplicaStartedMidChurn(t *testing.T) {
	schema := pgtest.Name(t)
	busy, store := openReplica(t, schema, 8)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 4 {
		wg.Go(func() { errs <- churn(ctx, busy, i, 60) })
	}
	var late []*broker.Broker
	for range 3 {
		time.Sleep(100 * time.Millisecond) // let the churn run before the next replica starts
		b, _ := openReplica(t, schema, 8)
		late = append(late, b)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	last, err := store.LastEventSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := storeCounts(t, store)
	for i, b := range append(late, busy) {
		deadline := time.Now().Add(30 * time.Second)
		for b.Delivered() < last {
			if time.Now().After(deadline) {
				t.Fatalf("replica %d delivered events up to %d of %d within 30 s", i, b.Delivered(), last)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if d := cmp.Diff(want, ownCounts(t, b)); d != "" {
			t.Errorf("replica %d: own counts differ from the store's (-store +own):\n%s", i, d)
		}
	}
	if !slices.ContainsFunc(late, func(b *broker.Broker) bool { return b.Delivered() > 0 }) {
		t.Error("no replica saw an event")
	}
}
