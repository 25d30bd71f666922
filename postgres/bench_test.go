package postgres_test

import (
	"slices"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/postgres"
	"github.com/hitl-sh/hitl/postgres/pgtest"
	"github.com/jackc/pgx/v5"
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

// BenchmarkWAL measures the write-ahead log a question and an answer each
// write, committed alone after 1,000 questions (all with a deadline), as
// the server's WAL position moves (wal_B/op), and the size of the
// interactions' indexes per interaction at the end (index_B/interaction).
// Both count bytes, not time, so they vary little from host to host; a
// checkpoint during the run adds full-page images, and anything else
// writing to the same server adds its own WAL.
func BenchmarkWAL(b *testing.B) {
	for _, op := range []string{"question", "answer"} {
		b.Run(op, func(b *testing.B) {
			schema := pgtest.Name(b)
			s := open(b, schema, nil)
			c := pgtest.Connect(b)
			in := benchInteraction(b)
			in.Deadline = time.Now().Add(time.Hour)
			var ids []string
			create := func() {
				got, _, _, err := s.CreateInteraction(b.Context(), in)
				if err != nil {
					b.Fatal(err)
				}
				ids = append(ids, got.ID)
			}
			for range 1000 {
				create()
			}
			if op == "answer" {
				for range b.N {
					create()
				}
			}
			position := func() (lsn string) {
				if err := c.QueryRow(b.Context(), `SELECT pg_current_wal_insert_lsn()::text`).Scan(&lsn); err != nil {
					b.Fatal(err)
				}
				return lsn
			}
			tr := hitl.Transition{Status: hitl.StatusAnswered, Value: []byte(`"yes"`), By: "alice", Via: hitl.ChannelWeb}
			b.ResetTimer()
			start := position()
			for i := range b.N {
				if op == "question" {
					create()
					continue
				}
				tr.At = time.Now()
				if _, _, err := s.Resolve(b.Context(), ids[i], tr); err != nil {
					b.Fatal(err)
				}
			}
			end := position()
			b.StopTimer()
			var wal, indexes float64
			err := c.QueryRow(b.Context(), `SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::float8,
				pg_indexes_size(($3 || '.interactions')::regclass)::float8`,
				end, start, pgx.Identifier{schema}.Sanitize()).Scan(&wal, &indexes)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(wal/float64(b.N), "wal_B/op")
			b.ReportMetric(indexes/float64(len(ids)), "index_B/interaction")
		})
	}
}
