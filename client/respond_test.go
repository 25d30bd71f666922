package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
)

// lossyReplies wraps a server so that the first n answers it records lose
// their reply: the connection is closed after the answer is committed. It
// keeps the Idempotency-Key of every answer sent.
type lossyReplies struct {
	t    *testing.T
	mu   sync.Mutex
	lose int
	keys []string
}

func (l *lossyReplies) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/respond") {
			h.ServeHTTP(w, r)
			return
		}
		l.mu.Lock()
		l.keys = append(l.keys, r.Header.Get(hitl.IdempotencyKeyHeader))
		lose := l.lose > 0
		l.lose--
		l.mu.Unlock()
		if !lose {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != http.StatusOK {
			l.t.Errorf("answer to lose: %d %s, want it recorded", rec.Code, rec.Body)
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			l.t.Errorf("hijack: %v", err)
			return
		}
		conn.Close()
	})
}

// sent returns the keys of the answers sent so far.
func (l *lossyReplies) sent() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.keys...)
}

func TestRespondRetriesALostReplyWithItsKey(t *testing.T) {
	t.Parallel()
	l := &lossyReplies{t: t, lose: 1}
	ts := hitltest.Start(t, &hitltest.Options{Wrap: l.wrap})
	agent := hitltest.NewClient(t, ts.URL, nil)
	person := hitltest.NewClient(t, ts.URL, nil)
	ctx := context.Background()

	in := mustCreate(t, agent, hitl.CreateRequest{Type: hitl.TypeApproval, Question: "Deploy?"})
	got, err := person.Respond(ctx, in.ID, json.RawMessage(`"yes"`))
	if err != nil {
		t.Fatalf("respond with a lost reply: %v", err)
	}
	if got.Status != hitl.StatusAnswered || string(got.Result.Value) != "true" {
		t.Errorf("respond: %s %s, want answered true", got.Status, got.Result.Value)
	}
	keys := l.sent()
	if len(keys) != 2 || keys[0] == "" || keys[0] != keys[1] {
		t.Fatalf("keys sent %q, want the same key twice", keys)
	}

	// A new call, a new key; a conflict is not retried.
	_, err = person.Respond(ctx, in.ID, json.RawMessage(`"no"`))
	if !errors.Is(err, hitl.ErrConflict) {
		t.Errorf("another answer: %v, want a conflict", err)
	}
	keys = l.sent()
	if len(keys) != 3 || keys[2] == "" || keys[2] == keys[0] {
		t.Errorf("keys sent %q, want a third, new one", keys)
	}
}

func TestRespondIdempotentOwnKey(t *testing.T) {
	t.Parallel()
	l := &lossyReplies{t: t}
	ts := hitltest.Start(t, &hitltest.Options{Wrap: l.wrap})
	agent := hitltest.NewClient(t, ts.URL, nil)
	ctx := context.Background()
	in := mustCreate(t, agent, hitl.CreateRequest{Question: "Code?"})

	// Two processes (clients) sending the same answer with one key.
	first, err := hitltest.NewClient(t, ts.URL, nil).RespondIdempotent(ctx, in.ID, json.RawMessage(`"582491"`), "my-key")
	if err != nil {
		t.Fatal(err)
	}
	again, err := hitltest.NewClient(t, ts.URL, nil).RespondIdempotent(ctx, in.ID, json.RawMessage(`"582491"`), "my-key")
	if err != nil {
		t.Fatalf("same answer, same key: %v", err)
	}
	if again.Result.RespondedAt != first.Result.RespondedAt {
		t.Errorf("repeat: answered at %v, want the first answer's %v", again.Result.RespondedAt, first.Result.RespondedAt)
	}
	if _, err := agent.RespondIdempotent(ctx, in.ID, json.RawMessage(`"582491"`), ""); !errors.Is(err, hitl.ErrConflict) {
		t.Errorf("without a key: %v, want a conflict", err)
	}
	if keys := l.sent(); len(keys) != 3 || keys[0] != "my-key" || keys[2] != "" {
		t.Errorf("keys sent %q, want my-key twice, then none", keys)
	}
}
