package broker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/sqlite"
)

// The engine's hot paths, over a durable SQLite file (WAL,
// synchronous=FULL) unless a name says ":memory:". Compare runs with
// benchstat; "hitl bench" measures the same paths end to end over HTTP.

// benchBroker starts a broker over the SQLite database at path ("" means a
// new file), closed when the benchmark ends.
func benchBroker(b *testing.B, path string) *broker.Broker {
	b.Helper()
	if path == "" {
		path = filepath.Join(b.TempDir(), "hitl.db")
	}
	store, err := sqlite.Open(path, nil)
	if err != nil {
		b.Fatalf("open store: %v", err)
	}
	br := broker.New(store, nil)
	if err := br.Start(context.Background()); err != nil {
		b.Fatalf("start broker: %v", err)
	}
	b.Cleanup(func() {
		br.Close()
		store.Close()
	})
	return br
}

var yes = json.RawMessage(`true`)

// BenchmarkCreate measures asking one question: validation, one durable
// commit, and the created event.
func BenchmarkCreate(b *testing.B) {
	br := benchBroker(b, "")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := br.Create(ctx, approval()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRespondWakesWaiter measures answer → agent unblocked in the
// engine: from Respond being called to the waiting agent's Wait returning
// the answer (one durable commit in between).
func BenchmarkRespondWakesWaiter(b *testing.B) {
	br := benchBroker(b, "")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		in, _, err := br.Create(ctx, approval())
		if err != nil {
			b.Fatal(err)
		}
		done := make(chan *hitl.Interaction, 1)
		go func() {
			got, _ := br.Wait(ctx, in.ID)
			done <- got
		}()
		<-br.WaitStarted(in.ID) // registered
		b.StartTimer()
		if _, err := br.Respond(ctx, in.ID, yes); err != nil {
			b.Fatal(err)
		}
		if got := <-done; got == nil || got.Status != hitl.StatusAnswered {
			b.Fatalf("wait returned %+v", got)
		}
	}
}

// BenchmarkRoundTripParallel measures whole round trips — create, wait,
// answer, wait returns — from 16 agents per CPU at once, which group
// commit lets share commits.
func BenchmarkRoundTripParallel(b *testing.B) {
	br := benchBroker(b, "")
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			in, _, err := br.Create(ctx, approval())
			if err != nil {
				b.Error(err)
				return
			}
			done := make(chan error, 1)
			go func() {
				got, err := br.Wait(ctx, in.ID)
				if err == nil && got.Status != hitl.StatusAnswered {
					err = fmt.Errorf("wait returned %s", got.Status)
				}
				done <- err
			}()
			if _, err := br.Respond(ctx, in.ID, yes); err != nil {
				b.Error(err)
				return
			}
			if err := <-done; err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkFanout measures one new question reaching every live
// subscriber, over an in-memory store so that the commit does not hide the
// fan-out.
func BenchmarkFanout(b *testing.B) {
	for _, n := range []int{1, 100, 10_000} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			br := benchBroker(b, ":memory:")
			ctx := context.Background()
			var (
				got  atomic.Int64
				all  = make(chan struct{}, 1)
				wg   sync.WaitGroup
				subs []*broker.Subscription
			)
			for range n {
				s := br.Subscribe()
				subs = append(subs, s)
				wg.Go(func() {
					for range s.C() {
						if got.Add(1) == int64(n) {
							all <- struct{}{}
						}
					}
				})
			}
			b.Cleanup(func() {
				for _, s := range subs {
					s.Close()
				}
				wg.Wait()
			})
			b.ReportAllocs()
			for b.Loop() {
				got.Store(0)
				if _, _, err := br.Create(ctx, approval()); err != nil {
					b.Fatal(err)
				}
				<-all
			}
		})
	}
}
