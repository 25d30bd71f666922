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
// and returns them as counts of the pending questions a may see (nil:
// all).
func ownCounts(t *testing.T, b *broker.Broker, a *hitl.Audience) *hitl.InteractionCounts {
	t.Helper()
	select {
	case <-broker.PendingCountsLoaded(b):
	case <-time.After(30 * time.Second):
		t.Fatal("the broker's counts of pending questions were not loaded within 30 s")
	}
	groups, ok := broker.PendingCounts(b, a)
	if !ok {
		t.Fatal("counts loaded but not ready")
	}
	return hitl.CountGroups(groups, hitl.ListFilter{Status: hitl.StatusPending})
}

// storeCounts counts the pending questions a may see (nil: all) in the
// store, without the expiring ones (the broker reads those from the store
// every time).
func storeCounts(t *testing.T, s hitl.Store, a *hitl.Audience) *hitl.InteractionCounts {
	t.Helper()
	c, err := s.CountMatching(context.Background(), hitl.ListFilter{Status: hitl.StatusPending, VisibleTo: a}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	c.Expiring = 0
	return c
}

// audiences are the people the churn's questions may target, and nil
// (everyone's counts): user-0 alone, user-1 in sre (which escalations
// add), someone in ops (which some questions target) and a stranger.
var audiences = []*hitl.Audience{nil, {User: "user-0"}, {User: "user-1", Groups: []string{"sre"}},
	{User: "dan", Groups: []string{"ops"}}, {User: "stranger"}}

// sameCountsSoon waits until every escalation step that adds targets has
// fired, then until b's own counts match the store's for every audience,
// and reports the last difference if they do not within 30 s.
func sameCountsSoon(t *testing.T, b *broker.Broker, s hitl.Store, who string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		pc, err := s.CountPending(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(pc.Widening) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d questions' escalation steps did not fire within 30 s", who, len(pc.Widening))
		}
		time.Sleep(20 * time.Millisecond)
	}
	for {
		diff := ""
		for _, a := range audiences {
			if d := cmp.Diff(storeCounts(t, s, a), ownCounts(t, b, a)); d != "" {
				diff += fmt.Sprintf("seen by %+v (-store +own):\n%s", a, d)
			}
		}
		if diff == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: own counts differ from the store's:\n%s", who, diff)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// churn asks questions of several agents and types on b and cancels or
// answers some of them, i being the caller's number.
func churn(ctx context.Context, b *broker.Broker, i, n int) error {
	types := []hitl.Type{hitl.TypeApproval, hitl.TypeFreeText, hitl.TypeSingleChoice}
	for j := range n {
		req := hitl.CreateRequest{Type: types[j%3], Question: fmt.Sprintf("q %d/%d", i, j), Timeout: 3600,
			SourceAgent: fmt.Sprintf("agent-%d", (i+j)%4)}
		switch j % 5 {
		case 1:
			req.Targets = &hitl.Targets{Users: []string{fmt.Sprintf("user-%d", j%2)}}
		case 2:
			// sre is added soon after, while the churn goes on.
			req.Targets = &hitl.Targets{Groups: []string{"ops"}}
			req.Escalation = []hitl.EscalationStep{{After: "30ms", AddTargets: &hitl.Targets{Groups: []string{"sre"}}}}
		case 3:
			req.Targets = &hitl.Targets{Users: []string{"user-1"}, Groups: []string{"ops"}}
		}
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
	want := storeCounts(t, broker.StoreOf(b), nil)
	if want.Total == 0 || len(want.ByAgent) != 4 || len(want.ByType) != 3 {
		t.Fatalf("the churn left %+v pending; want some of every agent and type", want)
	}
	sameCountsSoon(t, b, broker.StoreOf(b), "after the churn")
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
	// And a responder's, of the questions that person may see.
	user1 := hitl.Caller{Name: "user-1", Role: hitl.RoleResponder, Groups: []string{"sre"}}
	f = hitl.ListFilter{Status: hitl.StatusPending, Types: []hitl.Type{hitl.TypeApproval}}
	got, err = b.Counts(hitl.WithCaller(ctx, user1), f)
	if err != nil {
		t.Fatal(err)
	}
	a := user1.Audience()
	f.VisibleTo = &a
	sql, err = broker.StoreOf(b).CountMatching(ctx, f, b.Now().Add(hitl.ExpiringWindow))
	if err != nil {
		t.Fatal(err)
	}
	if sql.Total == 0 || sql.Total == want.ByType[hitl.TypeApproval] {
		t.Errorf("%s sees %d of %d pending approvals; want some, not all", a.User, sql.Total, want.ByType[hitl.TypeApproval])
	}
	if d := cmp.Diff(sql, got); d != "" {
		t.Errorf("a responder's Counts(%+v) differs from the store's (-store +broker):\n%s", f, d)
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
	for i, b := range append(late, busy) {
		deadline := time.Now().Add(30 * time.Second)
		for b.Delivered() < last {
			if time.Now().After(deadline) {
				t.Fatalf("replica %d delivered events up to %d of %d within 30 s", i, b.Delivered(), last)
			}
			time.Sleep(10 * time.Millisecond)
		}
		sameCountsSoon(t, b, store, fmt.Sprintf("replica %d", i))
	}
	if !slices.ContainsFunc(late, func(b *broker.Broker) bool { return b.Delivered() > 0 }) {
		t.Error("no replica saw an event")
	}
}
