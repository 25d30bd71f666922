package hitltest_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/server"
)

// TestRestart creates an interaction, restarts the server, and expects it
// at the same URL, on the same file, behind the same wrap.
func TestRestart(t *testing.T) {
	t.Parallel()
	var requests atomic.Int64
	first := hitltest.Start(t, &hitltest.Options{Wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			requests.Add(1)
			h.ServeHTTP(w, r)
		})
	}})
	in, _, err := hitltest.NewClient(t, first.URL, nil).Create(context.Background(), hitl.CreateRequest{Question: "still here?"})
	if err != nil {
		t.Fatalf("create: %v", err)
	}

	second := first.Restart(t)
	first.Stop() // a second Stop does nothing
	if second.URL != first.URL {
		t.Errorf("restarted at %s, want %s", second.URL, first.URL)
	}
	got, err := hitltest.NewClient(t, second.URL, nil).Get(context.Background(), in.ID)
	if err != nil {
		t.Fatalf("get after restart: %v", err)
	}
	if got.Question != in.Question {
		t.Errorf("question = %q, want %q", got.Question, in.Question)
	}
	if got, want := requests.Load(), int64(2); got != want {
		t.Errorf("wrap saw %d requests, want %d", got, want)
	}
}

// TestStartBroker answers on an in-process engine.
func TestStartBroker(t *testing.T) {
	t.Parallel()
	b := hitltest.StartBroker(t)
	in, _, err := b.Create(context.Background(), hitl.CreateRequest{Question: "anyone?"})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if in.Status != hitl.StatusPending {
		t.Errorf("status = %q, want pending", in.Status)
	}
}

// TestLogSignal signals on the one message it waits for.
func TestLogSignal(t *testing.T) {
	t.Parallel()
	h := hitltest.NewLogSignal("wanted")
	log := slog.New(h)
	log.Info("other")
	log.Warn("wanted", "n", 1)
	if got := len(h.C); got != 1 {
		t.Errorf("%d signals, want 1", got)
	}
}

// TestPeople starts a server with the test people: anonymous calls are
// refused, a person logs in, a token works, and a wrong password does not.
func TestPeople(t *testing.T) {
	t.Parallel()
	s := hitltest.Start(t, &hitltest.Options{People: true})
	if _, _, err := hitltest.NewClient(t, s.URL, nil).List(context.Background(), hitl.ListFilter{}); err == nil {
		t.Error("list without credentials: no error, want 401")
	}
	agent := hitltest.NewClient(t, s.URL, &client.Options{Token: s.Token(t, "build-bot", hitl.RoleAgent)})
	if _, _, err := agent.Create(context.Background(), hitl.CreateRequest{Question: "with a token?"}); err != nil {
		t.Errorf("create with a token: %v", err)
	}
	ck := s.Login(t, "carol", hitltest.CarolPassword)
	req, err := http.NewRequest("GET", s.URL+"/api/v1/auth/me", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(ck)
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("me with carol's cookie: %d, want 200", resp.StatusCode)
	}
	if _, err := s.Store.User(context.Background(), "bob"); err != nil {
		t.Errorf("bob: %v", err)
	}
}

// countingStore counts the interactions created through it.
type countingStore struct {
	hitl.Store
	created atomic.Int64
}

func (s *countingStore) CreateInteraction(ctx context.Context, in *hitl.Interaction) (*hitl.Interaction, *hitl.Event, bool, error) {
	s.created.Add(1)
	return s.Store.CreateInteraction(ctx, in)
}

// TestStartOnPostgres runs a server on a PostgreSQL schema with its store
// wrapped, and closes what Configure started after the broker and before
// the store.
func TestStartOnPostgres(t *testing.T) {
	t.Parallel()
	counted := &countingStore{}
	var order []string
	s := hitltest.Start(t, &hitltest.Options{
		DB:        hitltest.PostgresDB(t),
		WrapStore: func(st hitl.Store) hitl.Store { counted.Store = st; return counted },
		Configure: func(t testing.TB, e *hitltest.Engine, _ *server.Options) {
			e.OnClose(func() {
				select {
				case <-e.Broker.Done():
				default:
					order = append(order, "channel before the broker closed")
				}
				if _, err := e.Store.LastEventSeq(context.Background()); err != nil {
					order = append(order, "channel after the store closed")
				}
				order = append(order, "channel")
			})
		},
	})
	if s.Path != "" {
		t.Errorf("path %q on PostgreSQL, want none", s.Path)
	}
	if _, _, err := hitltest.NewClient(t, s.URL, nil).Create(context.Background(), hitl.CreateRequest{Question: "on postgres?"}); err != nil {
		t.Fatalf("create: %v", err)
	}
	if got := counted.created.Load(); got != 1 {
		t.Errorf("the wrapped store saw %d creations, want 1", got)
	}
	s.Stop()
	if fmt.Sprint(order) != "[channel]" {
		t.Errorf("closing: %v, want [channel]", order)
	}
}
