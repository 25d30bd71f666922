package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// openInternal opens a store on a new file with a scratch table t(v).
func openInternal(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "hitl.db"), nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.w.Exec(`CREATE TABLE t (v TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return s
}

// insert returns a write that inserts v into t, then fails with err (nil:
// succeeds).
func insert(v string, err error) func(ctx context.Context, tx *sql.Tx) error {
	return func(ctx context.Context, tx *sql.Tx) error {
		if _, e := tx.ExecContext(ctx, `INSERT INTO t (v) VALUES (?)`, v); e != nil {
			return e
		}
		return err
	}
}

// rows returns the values in t.
func rows(t *testing.T, s *Store) map[string]bool {
	t.Helper()
	rs, err := s.r.Query(`SELECT v FROM t`)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	got := map[string]bool{}
	for rs.Next() {
		var v string
		if err := rs.Scan(&v); err != nil {
			t.Fatal(err)
		}
		got[v] = true
	}
	return got
}

// holdBatch starts a write that blocks until release is closed, so that the
// writes started meanwhile queue up and commit together in the next batch.
// It returns once that write is running, and a channel with its result.
func holdBatch(t *testing.T, s *Store, release <-chan struct{}) <-chan error {
	t.Helper()
	running := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.write(context.Background(), func(ctx context.Context, tx *sql.Tx) error {
			close(running)
			<-release
			return insert("holder", nil)(ctx, tx)
		})
	}()
	<-running
	return done
}

// awaitQueued waits until n writes are queued behind the running batch.
func awaitQueued(s *Store, n int) {
	for {
		s.wq.mu.Lock()
		got := len(s.wq.queue)
		s.wq.mu.Unlock()
		if got >= n {
			return
		}
		runtime.Gosched()
	}
}

func TestGroupCommitFailureIsUndoneAlone(t *testing.T) {
	s := openInternal(t)
	release := make(chan struct{})
	held := holdBatch(t, s, release)

	boom := errors.New("boom")
	queued, cancelQueued := context.WithCancel(context.Background())
	defer cancelQueued()
	writes := []struct {
		v   string
		ctx context.Context
		err error // returned by the write
	}{
		{"a", context.Background(), nil},
		{"b", context.Background(), boom},
		{"c", context.Background(), nil},
		{"d", queued, nil}, // cancelled while it waits for its turn
	}
	results := make([]chan error, len(writes))
	for i, w := range writes {
		results[i] = make(chan error, 1)
		go func() { results[i] <- s.write(w.ctx, insert(w.v, w.err)) }()
		awaitQueued(s, i+1)
	}
	cancelQueued()
	close(release)
	if err := <-held; err != nil {
		t.Fatalf("holder: %v", err)
	}
	for i, w := range writes {
		err := <-results[i]
		switch {
		case w.err != nil && !errors.Is(err, w.err):
			t.Errorf("write %s: got %v, want %v", w.v, err, w.err)
		case w.ctx == queued && !errors.Is(err, context.Canceled):
			t.Errorf("write %s: got %v, want context.Canceled", w.v, err)
		case w.err == nil && w.ctx != queued && err != nil:
			t.Errorf("write %s: %v", w.v, err)
		}
	}
	got := rows(t, s)
	want := map[string]bool{"holder": true, "a": true, "c": true}
	if len(got) != len(want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	for v := range want {
		if !got[v] {
			t.Errorf("rows %v, want %v", got, want)
		}
	}
}

// A batch runs without savepoints, each write once; when a write fails,
// the batch is rolled back and run again with savepoints, which calls the
// failed write and those before it a second time and keeps all but the
// failed one's.
func TestGroupCommitRunsABatchAgainWhenAWriteFails(t *testing.T) {
	for _, fails := range []bool{false, true} {
		t.Run(fmt.Sprint("fails=", fails), func(t *testing.T) {
			s := openInternal(t)
			release := make(chan struct{})
			held := holdBatch(t, s, release)
			var calls [3]atomic.Int32
			boom := errors.New("boom")
			results := make([]chan error, 3)
			for i, v := range []string{"before", "failing", "after"} {
				var err error
				if i == 1 && fails {
					err = boom
				}
				results[i] = make(chan error, 1)
				go func() {
					results[i] <- s.write(context.Background(), func(ctx context.Context, tx *sql.Tx) error {
						calls[i].Add(1)
						return insert(v, err)(ctx, tx)
					})
				}()
				awaitQueued(s, i+1)
			}
			close(release)
			if err := <-held; err != nil {
				t.Fatalf("holder: %v", err)
			}
			for i := range results {
				if err := <-results[i]; (i == 1 && fails) != errors.Is(err, boom) || (err != nil && !errors.Is(err, boom)) {
					t.Errorf("write %d: %v", i, err)
				}
			}
			want := map[string]bool{"holder": true, "before": true, "failing": !fails, "after": true}
			wantCalls := [3]int32{1, 1, 1}
			if fails {
				delete(want, "failing")
				wantCalls = [3]int32{2, 2, 1}
			}
			if got := rows(t, s); len(got) != len(want) || !got["before"] || !got["after"] || got["failing"] == fails {
				t.Errorf("rows %v, want %v", got, want)
			}
			for i := range calls {
				if got := calls[i].Load(); got != wantCalls[i] {
					t.Errorf("write %d called %d times, want %d", i, got, wantCalls[i])
				}
			}
		})
	}
}

// A write of a batch that changes many pages, then fails, is undone from
// its savepoint's journal, which the writer keeps in memory.
func TestGroupCommitUndoesALargeWrite(t *testing.T) {
	s := openInternal(t)
	var store int
	if err := s.w.QueryRow(`PRAGMA temp_store`).Scan(&store); err != nil || store != 2 {
		t.Fatalf("writer's temp_store is %d (%v), want 2 (memory)", store, err)
	}
	// About 60 pages of rows, committed.
	big := strings.Repeat("x", 2000)
	if err := s.write(context.Background(), func(ctx context.Context, tx *sql.Tx) error {
		for i := range 120 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO t (v) VALUES (?)`, fmt.Sprint(i, big)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	held := holdBatch(t, s, release)
	boom := errors.New("boom")
	rewrite := make(chan error, 1)
	go func() {
		rewrite <- s.write(context.Background(), func(ctx context.Context, tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `UPDATE t SET v = upper(v)`); err != nil {
				return err
			}
			return boom
		})
	}()
	awaitQueued(s, 1)
	after := make(chan error, 1)
	go func() { after <- s.write(context.Background(), insert("after", nil)) }()
	awaitQueued(s, 2)
	close(release)
	if err := <-held; err != nil {
		t.Fatalf("holder: %v", err)
	}
	if err := <-rewrite; !errors.Is(err, boom) {
		t.Fatalf("rewrite: got %v, want boom", err)
	}
	if err := <-after; err != nil {
		t.Fatalf("after: %v", err)
	}
	got := rows(t, s)
	if len(got) != 122 || !got["holder"] || !got["after"] {
		t.Fatalf("%d rows, want the 120, holder and after", len(got))
	}
	for v := range got {
		if strings.Contains(v, "X") {
			t.Fatalf("the failed write's change is kept: %.20s…", v)
		}
	}
}

func TestGroupCommitManyWriters(t *testing.T) {
	s := openInternal(t)
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			var err error
			if i%10 == 0 {
				err = errors.New("fails")
			}
			if got := s.write(context.Background(), insert(string(rune('A'+i%26))+string(rune('0'+i/26)), err)); (got != nil) != (err != nil) {
				errs <- got
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("write: %v", err)
	}
	if got, want := len(rows(t, s)), n-n/10; got != want {
		t.Errorf("%d rows, want %d", got, want)
	}
	s.wq.mu.Lock()
	defer s.wq.mu.Unlock()
	if s.wq.leading || len(s.wq.queue) != 0 {
		t.Errorf("queue not idle after the writes: leading %v, %d queued", s.wq.leading, len(s.wq.queue))
	}
}

func TestBackgroundCheckpoint(t *testing.T) {
	s := openInternal(t)
	var limit int
	if err := s.w.QueryRow(`PRAGMA wal_autocheckpoint`).Scan(&limit); err != nil {
		t.Fatal(err)
	}
	if limit != backstopPages {
		t.Errorf("writer's wal_autocheckpoint = %d, want %d", limit, backstopPages)
	}
	type result struct{ logPages, done int }
	ran := make(chan result, 16)
	s.cp.observe = func(logPages, done int) {
		select {
		case ran <- result{logPages, done}:
		default:
		}
	}
	if err := s.write(context.Background(), insert("x", nil)); err != nil {
		t.Fatal(err)
	}
	got := <-ran
	if got.logPages == 0 || got.done != got.logPages {
		t.Errorf("checkpoint after a write: %d WAL pages, %d checkpointed; want all of them, at least one", got.logPages, got.done)
	}
}

// A write made with writeAlone (a purge batch) does not share its
// transaction: the writes queued before it commit together without it,
// those after it in the next transaction, and its failure leaves theirs
// alone.
func TestWriteAloneCommitsByItself(t *testing.T) {
	s := openInternal(t)
	release := make(chan struct{})
	held := holdBatch(t, s, release)

	var (
		mu    sync.Mutex
		txs   = map[string]*sql.Tx{}
		calls = map[string]int{}
	)
	record := func(v string, err error) func(ctx context.Context, tx *sql.Tx) error {
		return func(ctx context.Context, tx *sql.Tx) error {
			mu.Lock()
			txs[v] = tx
			calls[v]++
			mu.Unlock()
			return insert(v, err)(ctx, tx)
		}
	}
	boom := errors.New("boom")
	writes := []struct {
		v     string
		alone bool
		err   error
	}{
		{"a", false, nil},
		{"b", false, nil},
		{"alone", true, boom},
		{"c", false, nil},
	}
	results := make([]chan error, len(writes))
	for i, w := range writes {
		results[i] = make(chan error, 1)
		go func() {
			if w.alone {
				results[i] <- s.writeAlone(context.Background(), record(w.v, w.err))
			} else {
				results[i] <- s.write(context.Background(), record(w.v, w.err))
			}
		}()
		awaitQueued(s, i+1)
	}
	close(release)
	if err := <-held; err != nil {
		t.Fatalf("holder: %v", err)
	}
	for i, w := range writes {
		if err := <-results[i]; !errors.Is(err, w.err) {
			t.Errorf("write %s: got %v, want %v", w.v, err, w.err)
		}
	}
	if txs["a"] != txs["b"] {
		t.Error("a and b, queued together before the lone write, did not share a transaction")
	}
	if txs["alone"] == txs["a"] || txs["alone"] == txs["c"] {
		t.Error("the lone write shared a transaction")
	}
	for v, n := range calls {
		if n != 1 {
			t.Errorf("write %s called %d times, want once", v, n)
		}
	}
	if got := rows(t, s); len(got) != 4 || got["alone"] {
		t.Errorf("rows %v, want holder, a, b and c", got)
	}
}
