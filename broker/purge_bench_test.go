package broker_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/sqlite"
)

// BenchmarkPurgeWhileAnswering purges 100,000 interactions that ended
// long ago (HITL_BENCH_PURGE sets another number, HITL_BENCH_PURGE_BATCH
// the batch size) from a SQLite file
// while 8 agents ask and answer as fast as they can, and reports how long
// the purge took and what it did to the answers' commits: their p50, p99
// and worst latency during the purge, against the same load without one.
// One iteration is the whole measure: run it with -benchtime=1x.
func BenchmarkPurgeWhileAnswering(b *testing.B) {
	n, batch := 100_000, 0
	for env, dst := range map[string]*int{"HITL_BENCH_PURGE": &n, "HITL_BENCH_PURGE_BATCH": &batch} {
		if v := os.Getenv(env); v != "" {
			var err error
			if *dst, err = strconv.Atoi(v); err != nil {
				b.Fatalf("%s: %v", env, err)
			}
		}
	}
	for range b.N {
		b.StopTimer()
		store, err := sqlite.Open(filepath.Join(b.TempDir(), "hitl.db"), nil)
		if err != nil {
			b.Fatal(err)
		}
		old := time.Now().Add(-100 * 24 * time.Hour)
		fillEnded(b, store, n, old)

		const agents = 8
		base := answerLoad(b, store, agents, func(done int64) bool { return done >= 4000 })
		var (
			purged   atomic.Bool
			total    *broker.PurgeTotal
			purgeErr error
		)
		timed := &timedPurge{Store: store}
		b.StartTimer()
		during := answerLoad(b, store, agents, func(int64) bool { return purged.Load() }, func() {
			total, purgeErr = broker.Purge(context.Background(), timed, old.Add(time.Hour), &broker.PurgeOptions{Batch: batch})
			purged.Store(true)
		})
		b.StopTimer()
		if purgeErr != nil || total.Interactions() != n {
			b.Fatalf("purge: %+v, %v; want %d interactions", total, purgeErr, n)
		}
		b.ReportMetric(total.Took.Seconds(), "purge_s")
		b.ReportMetric(float64(n)/total.Took.Seconds(), "purged/s")
		b.ReportMetric(float64(total.Batches), "batches")
		b.ReportMetric(float64(len(during)), "answers_during")
		for _, m := range []struct {
			name string
			lat  []time.Duration
		}{{"base", base}, {"purging", during}, {"batch", timed.took}} {
			slices.Sort(m.lat)
			b.ReportMetric(us(m.lat[len(m.lat)/2]), m.name+"_p50_us")
			b.ReportMetric(us(m.lat[len(m.lat)*99/100]), m.name+"_p99_us")
			b.ReportMetric(us(m.lat[len(m.lat)-1]), m.name+"_max_us")
		}
		store.Close()
		b.StartTimer()
	}
}

func us(d time.Duration) float64 { return float64(d.Microseconds()) }

// timedPurge is a store that keeps how long each PurgeEnded took.
type timedPurge struct {
	hitl.Store
	took []time.Duration
}

func (s *timedPurge) PurgeEnded(ctx context.Context, p hitl.Purge) (*hitl.Purged, error) {
	start := time.Now()
	defer func() { s.took = append(s.took, time.Since(start)) }()
	return s.Store.PurgeEnded(ctx, p)
}

// fillEnded stores n interactions created at old and cancelled a minute
// later, from many goroutines (group commit), and one pending question
// after them (the newest event is not theirs).
func fillEnded(b *testing.B, store hitl.Store, n int, old time.Time) {
	b.Helper()
	ctx := context.Background()
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range 64 {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				in := benchQuestion(b, old)
				got, _, _, err := store.CreateInteraction(ctx, in)
				if err == nil {
					_, _, err = store.Resolve(ctx, got.ID, hitl.Transition{Status: hitl.StatusCancelled, By: "agent", Via: hitl.ChannelAPI, At: old.Add(time.Minute), Reason: "agent_cancelled"})
				}
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if _, _, _, err := store.CreateInteraction(ctx, benchQuestion(b, time.Now())); err != nil {
		b.Fatal(err)
	}
}

// benchQuestion is an approval question created at when.
func benchQuestion(b *testing.B, when time.Time) *hitl.Interaction {
	in, err := hitl.NewInteraction(approval(), hitl.Caller{Name: "agent", Channel: hitl.ChannelAPI}, when)
	if err != nil {
		b.Fatal(err)
	}
	return in
}

// answerLoad runs agents goroutines that each ask a question and answer
// it, over and over, alongside each of also (run once each), until stop
// says so (given how many answers were made), and returns the latency of
// every answer's commit (Resolve).
func answerLoad(b *testing.B, store hitl.Store, agents int, stop func(done int64) bool, also ...func()) []time.Duration {
	b.Helper()
	ctx := context.Background()
	var (
		mu   sync.Mutex
		lat  []time.Duration
		done atomic.Int64
		wg   sync.WaitGroup
	)
	for _, fn := range also {
		wg.Go(fn)
	}
	for range agents {
		wg.Go(func() {
			var mine []time.Duration
			defer func() {
				mu.Lock()
				lat = append(lat, mine...)
				mu.Unlock()
			}()
			for !stop(done.Load()) {
				in, _, _, err := store.CreateInteraction(ctx, benchQuestion(b, time.Now()))
				if err != nil {
					b.Error(err)
					return
				}
				start := time.Now()
				if _, _, err := store.Resolve(ctx, in.ID, hitl.Transition{Status: hitl.StatusAnswered, Value: yes, By: "alice", Via: hitl.ChannelWeb, From: in}); err != nil {
					b.Error(err)
					return
				}
				mine = append(mine, time.Since(start))
				done.Add(1)
			}
		})
	}
	wg.Wait()
	return lat
}
