package sqlite_test

import (
	"database/sql"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/sqlite"
)

// benchInteraction returns a new free-text interaction for benchmarks.
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

// benchStore opens a store on a new file.
func benchStore(b *testing.B) *sqlite.Store {
	b.Helper()
	return open(b, tempPath(b), nil)
}

// BenchmarkCreate measures one durable create (insert and event, one commit).
func BenchmarkCreate(b *testing.B) {
	s := benchStore(b)
	in := benchInteraction(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, err := s.CreateInteraction(b.Context(), in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateParallel measures creates from 16 goroutines per CPU,
// which group commit batches into shared commits.
func BenchmarkCreateParallel(b *testing.B) {
	s := benchStore(b)
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

// BenchmarkResolve measures the answer path: the compare-and-set, its
// event and one commit.
func BenchmarkResolve(b *testing.B) {
	s := benchStore(b)
	in := benchInteraction(b)
	var ids []string
	tr := hitl.Transition{Status: hitl.StatusAnswered, Value: []byte(`"yes"`), By: "alice", Via: hitl.ChannelWeb}
	b.ReportAllocs()
	for b.Loop() {
		if len(ids) == 0 {
			b.StopTimer()
			for range 1000 {
				got, _, _, err := s.CreateInteraction(b.Context(), in)
				if err != nil {
					b.Fatal(err)
				}
				ids = append(ids, got.ID)
			}
			b.StartTimer()
		}
		tr.At = time.Now()
		if _, _, err := s.Resolve(b.Context(), ids[0], tr); err != nil {
			b.Fatal(err)
		}
		ids = ids[1:]
	}
}

// BenchmarkInteraction measures a read by id from the reader pool.
func BenchmarkInteraction(b *testing.B) {
	s := benchStore(b)
	got, _, _, err := s.CreateInteraction(b.Context(), benchInteraction(b))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Interaction(b.Context(), got.ID); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkEvents measures reading a page of 100 events with their
// interactions.
func BenchmarkEvents(b *testing.B) {
	s := benchStore(b)
	in := benchInteraction(b)
	for range 100 {
		if _, _, _, err := s.CreateInteraction(b.Context(), in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		evs, err := s.Events(b.Context(), 0, 100)
		if err != nil || len(evs) != 100 {
			b.Fatalf("got %d events, %v", len(evs), err)
		}
	}
}

// BenchmarkWALFrames counts the pages a commit writes to the WAL (a 4 KiB
// page and its checksum each), for a question and for an answer each
// committed alone, after 1,000 questions: the frames/op metric is exact,
// the same on any host, where the time per op is mostly the disk's. A
// reader holds the WAL meanwhile, so it cannot start over and its frame
// count only grows.
func BenchmarkWALFrames(b *testing.B) {
	for _, op := range []string{"question", "answer"} {
		b.Run(op, func(b *testing.B) {
			path := tempPath(b)
			s := open(b, path, nil)
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
			create() // so that the reader's snapshot holds WAL frames
			frames := holdWAL(b, path)
			tr := hitl.Transition{Status: hitl.StatusAnswered, Value: []byte(`"yes"`), By: "alice", Via: hitl.ChannelWeb}
			b.ResetTimer()
			before := frames()
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
			b.ReportMetric(float64(frames()-before)/float64(b.N), "frames/op")
		})
	}
}

// holdWAL opens a read transaction on the database at path for the rest of
// the benchmark and returns a function that reads how many frames the WAL
// holds.
func holdWAL(b *testing.B, path string) func() int64 {
	b.Helper()
	conn := func() *sql.DB {
		db, err := sql.Open("sqlite", "file:"+path)
		if err != nil {
			b.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		b.Cleanup(func() { db.Close() })
		return db
	}
	reader, counter := conn(), conn()
	tx, err := reader.Begin()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tx.Rollback() })
	var n int
	if err := tx.QueryRow(`SELECT count(*) FROM interactions`).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return func() int64 {
		var busy, log, done int64
		if err := counter.QueryRow(`PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &done); err != nil {
			b.Fatal(err)
		}
		return log
	}
}
