package broker_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/postgres"
	"github.com/hitl-sh/hitl/postgres/pgtest"
	"github.com/hitl-sh/hitl/sqlite"
)

// newBroker starts a broker over a new SQLite file.
func newBroker(t *testing.T, opts *broker.Options) *broker.Broker {
	t.Helper()
	return openBroker(t, filepath.Join(t.TempDir(), "hitl.db"), opts)
}

// openBroker starts a broker over the SQLite file at path, closed (with its
// store) when the test ends.
func openBroker(t *testing.T, path string, opts *broker.Options) *broker.Broker {
	t.Helper()
	store, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	return startBroker(t, store, opts)
}

// startBroker starts a broker over store; both are closed when the test
// ends.
func startBroker(t *testing.T, store hitl.Store, opts *broker.Options) *broker.Broker {
	t.Helper()
	b := broker.New(store, opts)
	if err := b.Start(context.Background()); err != nil {
		store.Close()
		t.Fatalf("start broker: %v", err)
	}
	t.Cleanup(func() {
		b.Close()
		store.Close()
	})
	return b
}

// openReplica starts a broker over the PostgreSQL schema, as one replica
// of several sharing it, with at most conns connections.
func openReplica(t *testing.T, schema string, conns int) (*broker.Broker, *postgres.Store) {
	t.Helper()
	store, err := postgres.Open(context.Background(), pgtest.DSN(), &postgres.Options{Schema: schema, MaxConns: conns})
	if err != nil {
		t.Fatalf("open replica: %v", err)
	}
	return startBroker(t, store, nil), store
}

func mustCreate(t *testing.T, b *broker.Broker, req hitl.CreateRequest) *hitl.Interaction {
	t.Helper()
	in, created, err := b.Create(context.Background(), req)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if !created {
		t.Fatalf("create: created = false, want true")
	}
	return in
}

func approval() hitl.CreateRequest {
	return hitl.CreateRequest{Type: hitl.TypeApproval, Question: "Deploy to production?", Timeout: 600}
}

func TestRespondThenWaitReturnsTheKeptAnswer(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	in := mustCreate(t, b, approval())
	if _, err := b.Respond(context.Background(), in.ID, json.RawMessage(`"yes"`)); err != nil {
		t.Fatalf("respond: %v", err)
	}
	got, err := b.Wait(context.Background(), in.ID)
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	if got.Status != hitl.StatusAnswered || string(got.Result.Value) != "true" {
		t.Errorf("got status %s value %s, want answered true", got.Status, got.Result.Value)
	}
	if got.Result.RespondedBy != hitl.LocalCaller || got.Result.Channel != hitl.ChannelAPI {
		t.Errorf("got responded_by %q channel %q, want local api", got.Result.RespondedBy, got.Result.Channel)
	}
}

func TestManyWaitersWakeOnOneAnswer(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	in := mustCreate(t, b, hitl.CreateRequest{Question: "Name?"})
	const n = 20
	var wg sync.WaitGroup
	results := make(chan *hitl.Interaction, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := b.Wait(context.Background(), in.ID)
			if err != nil {
				t.Errorf("wait: %v", err)
				return
			}
			results <- got
		}()
	}
	// Answer once every waiter is registered, so the wake-up path (not the
	// initial read) is what releases them.
	<-b.WaitStarted(in.ID)
	ctx := hitl.WithCaller(context.Background(), hitl.Caller{Name: "alice", Channel: hitl.ChannelWeb})
	if _, err := b.Respond(ctx, in.ID, json.RawMessage(`"Ada"`)); err != nil {
		t.Fatalf("respond: %v", err)
	}
	wg.Wait()
	close(results)
	count := 0
	for got := range results {
		count++
		if string(got.Result.Value) != `"Ada"` || got.Result.RespondedBy != "alice" {
			t.Errorf("waiter got %s by %s, want \"Ada\" by alice", got.Result.Value, got.Result.RespondedBy)
		}
	}
	if count != n {
		t.Errorf("%d waiters returned, want %d", count, n)
	}
	if w := b.Waiting(); w != 0 {
		t.Errorf("Waiting() = %d after wake-up, want 0", w)
	}
}

func TestWaitEndsWithContext(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	in := mustCreate(t, b, approval())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		got, err := b.Wait(ctx, in.ID)
		if got == nil || got.Status != hitl.StatusPending {
			t.Errorf("wait returned %+v, want the pending interaction", got)
		}
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("wait error = %v, want context.Canceled", err)
	}
}

func TestWaitReleasedOnClose(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	in := mustCreate(t, b, approval())
	done := make(chan error, 1)
	go func() {
		_, err := b.Wait(context.Background(), in.ID)
		done <- err
	}()
	<-b.WaitStarted(in.ID)
	b.Close()
	if err := <-done; !errors.Is(err, broker.ErrClosed) {
		t.Errorf("wait error = %v, want ErrClosed", err)
	}
}

func TestWaitUnknown(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	if _, err := b.Wait(context.Background(), "nope"); !errors.Is(err, hitl.ErrNotFound) {
		t.Errorf("wait error = %v, want not found", err)
	}
}

func TestExactlyOneOfConcurrentAnswersWins(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	in := mustCreate(t, b, hitl.CreateRequest{Type: hitl.TypeSingleChoice, Question: "Which?", Options: hitl.OptionList{{Key: "a"}, {Key: "b"}}})
	const n = 50
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, conflicts := 0, 0
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			value := json.RawMessage(`"a"`)
			if i%2 == 1 {
				value = json.RawMessage(`"b"`)
			}
			_, err := b.Respond(context.Background(), in.ID, value)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, hitl.ErrConflict):
				conflicts++
			default:
				t.Errorf("respond: unexpected error %v", err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 || conflicts != n-1 {
		t.Errorf("wins %d conflicts %d, want 1 and %d", wins, conflicts, n-1)
	}
}

func TestRespondErrors(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	ctx := context.Background()

	in := mustCreate(t, b, approval())
	if _, err := b.Respond(ctx, in.ID, json.RawMessage(`"maybe"`)); !errors.Is(err, hitl.ErrValue) {
		t.Errorf("invalid value: err = %v, want invalid_value", err)
	}
	if _, err := b.Respond(ctx, "missing", json.RawMessage(`true`)); !errors.Is(err, hitl.ErrNotFound) {
		t.Errorf("unknown id: err = %v, want not_found", err)
	}
	if _, err := b.Respond(ctx, in.ID, json.RawMessage(`false`)); err != nil {
		t.Fatalf("respond: %v", err)
	}
	_, err := b.Respond(ctx, in.ID, json.RawMessage(`true`))
	if !errors.Is(err, hitl.ErrConflict) {
		t.Errorf("second answer: err = %v, want conflict", err)
	}
	if want := "interaction already answered by local via api"; hitl.ErrorMessage(err) != want {
		t.Errorf("second answer message %q, want %q", hitl.ErrorMessage(err), want)
	}

	c := mustCreate(t, b, approval())
	if _, err := b.Cancel(ctx, c.ID, ""); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if _, err := b.Respond(ctx, c.ID, json.RawMessage(`true`)); !errors.Is(err, hitl.ErrCancelled) {
		t.Errorf("answer after cancel: err = %v, want cancelled", err)
	}
	got, err := b.Cancel(ctx, c.ID, "again")
	if err != nil || got.Result.Reason != "agent_cancelled" {
		t.Errorf("second cancel: %v reason %q, want nil and the first reason", err, got.Result.Reason)
	}
	if _, err := b.Cancel(ctx, in.ID, ""); !errors.Is(err, hitl.ErrConflict) {
		t.Errorf("cancel after answer: err = %v, want conflict", err)
	}
}

func TestIdempotency(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	ctx := context.Background()
	req := hitl.CreateRequest{Question: "OTP code?", IdempotencyKey: "otp-1"}
	first := mustCreate(t, b, req)
	again, created, err := b.Create(ctx, req)
	if err != nil || created || again.ID != first.ID {
		t.Errorf("repeat: id %s created %v err %v, want %s false nil", again.ID, created, err, first.ID)
	}
	req.Question = "Another question"
	if _, _, err := b.Create(ctx, req); !errors.Is(err, hitl.ErrConflict) {
		t.Errorf("same key, other question: err = %v, want conflict", err)
	}
	other := hitl.WithCaller(ctx, hitl.Caller{Name: "other-agent", Channel: hitl.ChannelAPI})
	if _, created, err := b.Create(other, req); err != nil || !created {
		t.Errorf("same key, other agent: created %v err %v, want a new interaction", created, err)
	}
}

// TestIdempotencyCoversTargets: a retry with the same key is the same
// request only for the same people (in any order); a question for other
// people under a used key is a conflict, not the first one's answer.
func TestIdempotencyCoversTargets(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	ctx := context.Background()
	req := hitl.CreateRequest{Question: "Rotate the key?", IdempotencyKey: "rotate-1", Targets: &hitl.Targets{Users: []string{"alice", "bob"}, Groups: []string{"sre"}}}
	first := mustCreate(t, b, req)
	req.Targets = &hitl.Targets{Users: []string{"bob", "alice"}, Groups: []string{"sre"}}
	if again, created, err := b.Create(ctx, req); err != nil || created || again.ID != first.ID {
		t.Errorf("same people in another order: id %v created %v err %v; want %s again", again, created, err, first.ID)
	}
	req.Targets = &hitl.Targets{Users: []string{"mallory"}}
	if _, _, err := b.Create(ctx, req); !errors.Is(err, hitl.ErrConflict) {
		t.Errorf("same key, other people: err = %v, want conflict", err)
	}
	req.Targets = nil
	if _, _, err := b.Create(ctx, req); !errors.Is(err, hitl.ErrConflict) {
		t.Errorf("same key, anyone: err = %v, want conflict", err)
	}
}

func TestSubscriptionDeliversInOrder(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	sub := b.Subscribe()
	defer sub.Close()
	ctx := context.Background()
	const n = 30
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := mustCreate(t, b, hitl.CreateRequest{Question: "q"})
			if _, err := b.Respond(ctx, in.ID, json.RawMessage(`"a"`)); err != nil {
				t.Errorf("respond: %v", err)
			}
		}()
	}
	wg.Wait()
	last := sub.Start
	for range 2 * n {
		ev := <-sub.C()
		if ev.Seq != last+1 {
			t.Fatalf("event seq %d after %d, want %d", ev.Seq, last, last+1)
		}
		last = ev.Seq
		if ev.Interaction == nil || ev.Interaction.ID != ev.InteractionID {
			t.Fatalf("event %d has interaction %+v", ev.Seq, ev.Interaction)
		}
	}
}

func TestSlowSubscriberIsDropped(t *testing.T) {
	t.Parallel()
	b := newBroker(t, &broker.Options{SubscriberBuffer: 2})
	slow := b.Subscribe()
	fast := b.Subscribe()
	for range 5 {
		mustCreate(t, b, hitl.CreateRequest{Question: "q"})
		<-fast.C()
	}
	n := 0
	for range slow.C() {
		n++
	}
	if n != 2 {
		t.Errorf("slow subscriber got %d events before being dropped, want 2", n)
	}
	if slow.Err() == nil {
		t.Error("slow subscriber Err() = nil, want a reason")
	}
	if got := b.Subscribers(); got != 1 {
		t.Errorf("Subscribers() = %d, want 1", got)
	}
}

func TestDeadlines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBroker(t, nil)
		sub := b.Subscribe()
		defer sub.Close()
		ctx := context.Background()
		expiring := mustCreate(t, b, hitl.CreateRequest{Question: "Proceed?", Type: hitl.TypeApproval, Timeout: 60})
		defaulting := mustCreate(t, b, hitl.CreateRequest{Question: "Region?", Timeout: 30, OnTimeout: hitl.OnTimeoutDefault, DefaultResponse: json.RawMessage(`"eu-west-1"`)})

		waited := make(chan *hitl.Interaction, 1)
		go func() {
			got, err := b.Wait(ctx, expiring.ID)
			if err != nil {
				t.Errorf("wait: %v", err)
			}
			waited <- got
		}()

		time.Sleep(30 * time.Second)
		synctest.Wait()
		got, err := b.Get(ctx, defaulting.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != hitl.StatusAnswered || !got.Result.TimedOut || string(got.Result.Value) != `"eu-west-1"` || got.Result.Channel != hitl.ChannelTimeout {
			t.Errorf("on_timeout default: got %s %+v, want answered with the default, timed out", got.Status, got.Result)
		}
		if got, _ := b.Get(ctx, expiring.ID); got.Status != hitl.StatusPending {
			t.Errorf("after 30s the 60s interaction is %s, want pending", got.Status)
		}

		time.Sleep(30 * time.Second)
		synctest.Wait()
		got = <-waited
		if got.Status != hitl.StatusExpired || got.Result.Reason != "timeout" {
			t.Errorf("on_timeout cancel: got %s %+v, want expired for timeout", got.Status, got.Result)
		}
		if _, err := b.Respond(ctx, expiring.ID, json.RawMessage(`true`)); !errors.Is(err, hitl.ErrExpired) {
			t.Errorf("answer after expiry: err = %v, want expired", err)
		}
		var types []hitl.EventType
		for len(types) < 4 {
			types = append(types, (<-sub.C()).Type)
		}
		want := []hitl.EventType{hitl.EventCreated, hitl.EventCreated, hitl.EventAnswered, hitl.EventExpired}
		for i := range want {
			if types[i] != want[i] {
				t.Fatalf("events %v, want %v", types, want)
			}
		}
	})
}

func TestAnswerJustAfterDeadlineIsExpired(t *testing.T) {
	// The clock says the deadline passed; the timer has not fired yet.
	t.Parallel()
	var skew atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	b := newBroker(t, &broker.Options{Now: clock})
	in := mustCreate(t, b, hitl.CreateRequest{Question: "Code?", Timeout: 3600})
	skew.Store(int64(2 * time.Hour))
	_, err := b.Respond(context.Background(), in.ID, json.RawMessage(`"123456"`))
	if !errors.Is(err, hitl.ErrExpired) {
		t.Fatalf("late answer: err = %v, want expired", err)
	}
	got, _ := b.Get(context.Background(), in.ID)
	if got.Status != hitl.StatusExpired {
		t.Errorf("status %s, want expired", got.Status)
	}
}

func TestOverdueInteractionsExpireAtStartUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "hitl.db")
		store, err := sqlite.Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		b := broker.New(store, nil)
		if err := b.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		in := mustCreate(t, b, hitl.CreateRequest{Question: "Still there?", Timeout: 10})
		b.Close()
		store.Close()

		time.Sleep(time.Minute) // the server is down past the deadline

		b2 := openBroker(t, path, nil)
		got, err := b2.Get(context.Background(), in.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != hitl.StatusExpired {
			t.Errorf("after restart: status %s, want expired", got.Status)
		}
	})
}

// TestWaitStartingAsTheAnswerLandsIsWoken starts a wait at the moment an
// answer is being recorded, many times, with both kinds of wait: each must
// return the answer. A wait that reads the interaction as pending just
// after the answer woke the waiters, and so is never woken, fails it.
func TestWaitStartingAsTheAnswerLandsIsWoken(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	for i := range 300 {
		in := mustCreate(t, b, approval())
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		start := make(chan struct{})
		got := make(chan *hitl.Interaction, 1)
		go func() {
			<-start
			if i%2 == 0 {
				in, _ := b.Wait(ctx, in.ID)
				got <- in
				return
			}
			woken := make(chan *hitl.Interaction, 1)
			in, stop, err := b.WaitFunc(ctx, in.ID, func(in *hitl.Interaction) { woken <- in })
			if err == nil && stop != nil {
				select {
				case in = <-woken:
				case <-ctx.Done():
					stop()
				}
			}
			got <- in
		}()
		close(start)
		if _, err := b.Respond(context.Background(), in.ID, json.RawMessage(`true`)); err != nil {
			t.Fatalf("respond: %v", err)
		}
		if in := <-got; in == nil || in.Status != hitl.StatusAnswered {
			t.Fatalf("round %d: the wait returned %+v, want the answer", i, in)
		}
		cancel()
	}
}

// nextDeadlineHook is a store whose NextDeadline calls hook once it has
// read the answer, as if a question were asked at that moment, until hook
// reports that it has run.
type nextDeadlineHook struct {
	hitl.Store
	hook func() bool
}

func (s *nextDeadlineHook) NextDeadline(ctx context.Context) (time.Time, bool, error) {
	next, ok, err := s.Store.NextDeadline(ctx)
	if s.hook != nil && s.hook() {
		s.hook = nil
	}
	return next, ok, err
}

// TestDeadlineSetWhileTheTimerLooksAhead asks a question just as the
// deadline timer, having expired another, reads the next deadline: the new
// deadline must still be kept, not left to the timer's idle recheck.
func TestDeadlineSetWhileTheTimerLooksAhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, err := sqlite.Open(filepath.Join(t.TempDir(), "hitl.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		hooked := &nextDeadlineHook{Store: store}
		b := broker.New(hooked, nil)
		var (
			first, second *hitl.Interaction
			mu            sync.Mutex // guards first and second
		)
		hooked.hook = func() bool { // on the timer's goroutine
			mu.Lock()
			defer mu.Unlock()
			if first == nil {
				return false
			}
			if got, err := store.Interaction(context.Background(), first.ID); err != nil || got.Status != hitl.StatusExpired {
				return false
			}
			second = mustCreate(t, b, hitl.CreateRequest{Question: "Second?", Timeout: 20})
			return true
		}
		if err := b.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		mu.Lock()
		first = mustCreate(t, b, hitl.CreateRequest{Question: "First?", Timeout: 10})
		mu.Unlock()

		time.Sleep(11 * time.Second) // the first expires; the second is asked
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if second == nil {
			t.Fatal("the second question was not asked")
		}
		time.Sleep(21 * time.Second) // past the second's deadline
		synctest.Wait()
		if got, _ := b.Get(context.Background(), second.ID); got.Status != hitl.StatusExpired {
			t.Errorf("second, a second after its deadline: %s, want expired", got.Status)
		}
	})
}
