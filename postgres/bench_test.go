package postgres_test

import (
	"slices"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/postgres"
	"github.com/hitl-sh/hitl/postgres/pgtest"
)

// benchInteraction returns a new single-choice interaction for benchmarks.
func benchInteraction(b *testing.B) *hitl.Interaction {
	b.Helper()
	in, err := hitl.NewInteraction(hitl.CreateRequest{
		Type:     hitl.TypeSingleChoice,
		Question: "Deploy build 1234 to production?",
		Options:  hitl.OptionList{{Key: "yes", Label: "Yes"}, {Key: "no", Label: "No"}},
		Metadata: map[string]any{"build": "1234"},
	}, hitl.Caller{Name: "agent", Channel: hitl.ChannelAPI}, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	return in
}

// BenchmarkCreate measures one durable create: the interaction, its event
// and the NOTIFY, in one statement and one commit.
func BenchmarkCreate(b *testing.B) {
	s := open(b, pgtest.Name(b), nil)
	in := benchInteraction(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, err := s.CreateInteraction(b.Context(), in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateParallel measures creates from 16 goroutines per CPU
// over a pool of 16 connections.
func BenchmarkCreateParallel(b *testing.B) {
	s := open(b, pgtest.Name(b), &postgres.Options{MaxConns: 16})
	in := benchInteraction(b)
	b.ReportAllocs()
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, _, _, err := s.CreateInteraction(b.Context(), in); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkResolve measures one compare-and-set with its event.
func BenchmarkResolve(b *testing.B) {
	s := open(b, pgtest.Name(b), nil)
	in := benchInteraction(b)
	ids := make([]string, 0, 1000)
	tr := hitl.Transition{Status: hitl.StatusAnswered, Value: []byte(`"yes"`), By: "alice", Via: hitl.ChannelWeb}
	b.ReportAllocs()
	for b.Loop() {
		if len(ids) == 0 {
			b.StopTimer()
			for range cap(ids) {
				got, _, _, err := s.CreateInteraction(b.Context(), in)
				if err != nil {
					b.Fatal(err)
				}
				ids = append(ids, got.ID)
			}
			b.StartTimer()
		}
		if _, _, err := s.Resolve(b.Context(), ids[len(ids)-1], tr); err != nil {
			b.Fatal(err)
		}
		ids = ids[:len(ids)-1]
	}
}

// BenchmarkCrossReplicaWake measures how long an agent waiting on one
// broker takes to wake after an answer on another broker over the same
// database has committed: NOTIFY, the listener's check, the log read and
// the wake-up. It reports the median as wake-ns.
func BenchmarkCrossReplicaWake(b *testing.B) {
	schema := pgtest.Name(b)
	a := startBroker(b, open(b, schema, nil))
	r := startBroker(b, open(b, schema, nil))
	var lat []time.Duration
	for b.Loop() {
		in, _, err := a.Create(b.Context(), hitl.CreateRequest{Type: hitl.TypeApproval, Question: "Ship?"})
		if err != nil {
			b.Fatal(err)
		}
		woke := make(chan time.Time, 1)
		go func() {
			if _, err := a.Wait(b.Context(), in.ID); err != nil {
				b.Error(err)
			}
			woke <- time.Now()
		}()
		<-a.WaitStarted(in.ID)
		if _, err := r.Respond(b.Context(), in.ID, []byte(`true`)); err != nil {
			b.Fatal(err)
		}
		answered := time.Now()
		lat = append(lat, (<-woke).Sub(answered))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2]), "wake-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100]), "p99-wake-ns")
}
