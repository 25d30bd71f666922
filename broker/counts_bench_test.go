package broker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
)

// BenchmarkCounts measures the inbox's counts with 10,000 questions
// pending, a quarter of them targeted: everyone's (an admin's) and a
// person's who sees only the untargeted ones and those that target them
// (a responder's), both kept by the engine from events, and beside them
// the store's count of the responder's, which the engine's replaces.
func BenchmarkCounts(b *testing.B) {
	br := benchBroker(b, "")
	ctx := context.Background()
	const n = 10_000
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 64 {
		wg.Go(func() {
			for i := w; i < n; i += 64 {
				req := approval()
				req.SourceAgent = fmt.Sprintf("agent-%d", i%8)
				switch i % 8 {
				case 1:
					req.Targets = &hitl.Targets{Users: []string{fmt.Sprintf("user-%d", i%100)}}
				case 2:
					req.Targets = &hitl.Targets{Groups: []string{fmt.Sprintf("team-%d", i%10)}}
				}
				if _, _, err := br.Create(ctx, req); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	select {
	case <-broker.PendingCountsLoaded(br):
	case <-time.After(30 * time.Second):
		b.Fatal("counts not loaded")
	}
	responder := hitl.Caller{Name: "user-1", Role: hitl.RoleResponder, Groups: []string{"team-2"}}
	pending := hitl.ListFilter{Status: hitl.StatusPending}
	b.Run("everyone", func(b *testing.B) {
		for b.Loop() {
			if _, err := br.Counts(ctx, pending); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("responder", func(b *testing.B) {
		rctx := hitl.WithCaller(ctx, responder)
		for b.Loop() {
			if _, err := br.Counts(rctx, pending); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("responder-store", func(b *testing.B) {
		a := responder.Audience()
		f := pending
		f.VisibleTo = &a
		soon := br.Now().Add(hitl.ExpiringWindow)
		for b.Loop() {
			if _, err := broker.StoreOf(br).CountMatching(ctx, f, soon); err != nil {
				b.Fatal(err)
			}
		}
	})
}
