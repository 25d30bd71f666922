package broker_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/sqlite"
)

// clock is a settable time for Options.Now.
type clock struct{ ns atomic.Int64 }

func newClock(t time.Time) *clock {
	c := &clock{}
	c.set(t)
	return c
}

func (c *clock) now() time.Time      { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) set(t time.Time)     { c.ns.Store(t.UnixNano()) }
func (c *clock) add(d time.Duration) { c.ns.Add(int64(d)) }

// person is alice answering on the web.
func person(name string) context.Context {
	return hitl.WithCaller(context.Background(), hitl.Caller{Name: name, Channel: hitl.ChannelWeb, Role: hitl.RoleResponder})
}

func TestRespondIdempotentRepeat(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "hitl.db")
	clk := newClock(time.Now())
	store, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := broker.New(store, &broker.Options{Now: clk.now})
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	in := mustCreate(t, b, hitl.CreateRequest{Type: hitl.TypeApproval, Question: "Deploy?", Timeout: 60})
	alice := person("alice")
	first, err := b.RespondIdempotent(alice, in.ID, json.RawMessage(`"yes"`), "key-1")
	if err != nil {
		t.Fatalf("first answer: %v", err)
	}

	// The same answer (as normalised: "approve" is true too), key and
	// caller: the first answer's result, not a conflict.
	again, err := b.RespondIdempotent(alice, in.ID, json.RawMessage(`"approve"`), "key-1")
	if err != nil {
		t.Fatalf("repeat: %v", err)
	}
	if d := cmp.Diff(first, again); d != "" {
		t.Errorf("repeat returned (-first +repeat):\n%s", d)
	}
	for _, tt := range []struct {
		name  string
		ctx   context.Context
		value string
		key   string
	}{
		{"another value", alice, `false`, "key-1"},
		{"another key", alice, `true`, "key-2"},
		{"no key", alice, `true`, ""},
		{"another caller", person("bob"), `true`, "key-1"},
	} {
		if _, err := b.RespondIdempotent(tt.ctx, in.ID, json.RawMessage(tt.value), tt.key); hitl.ErrorCode(err) != hitl.ECONFLICT {
			t.Errorf("%s: got %v, want a conflict", tt.name, err)
		}
	}

	// After the deadline and a restart, the key still recognises the
	// retry.
	b.Close()
	store.Close()
	clk.add(2 * time.Minute)
	b2 := openBroker(t, path, &broker.Options{Now: clk.now})
	after, err := b2.RespondIdempotent(alice, in.ID, json.RawMessage(`true`), "key-1")
	if err != nil {
		t.Fatalf("repeat after a restart and the deadline: %v", err)
	}
	if d := cmp.Diff(first, after); d != "" {
		t.Errorf("repeat after restart returned (-first +repeat):\n%s", d)
	}
	if _, err := b2.RespondIdempotent(alice, in.ID, json.RawMessage(`false`), "key-1"); hitl.ErrorCode(err) != hitl.ECONFLICT {
		t.Errorf("another value after restart: got %v, want a conflict", err)
	}
}

func TestRespondIdempotentConcurrent(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	in := mustCreate(t, b, hitl.CreateRequest{Question: "Code?"})
	alice := person("alice")
	const n = 8
	var (
		wg   sync.WaitGroup
		got  = make([]*hitl.Interaction, n)
		errs = make([]error, n)
	)
	for i := range n {
		wg.Go(func() {
			got[i], errs[i] = b.RespondIdempotent(alice, in.ID, json.RawMessage(`"582491"`), "retry-me")
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("answer %d: %v", i, errs[i])
		}
		if d := cmp.Diff(got[0], got[i]); d != "" {
			t.Errorf("answer %d (-first +this):\n%s", i, d)
		}
	}
	if got[0].Result.IdempotencyKey != "retry-me" {
		t.Errorf("stored key %q, want retry-me", got[0].Result.IdempotencyKey)
	}
}

func TestRespondIdempotentBadKey(t *testing.T) {
	t.Parallel()
	b := newBroker(t, nil)
	in := mustCreate(t, b, approval())
	for _, key := range []string{"tab\there", "é", strings.Repeat("k", hitl.MaxKeyLen+1)} {
		if _, err := b.RespondIdempotent(person("alice"), in.ID, json.RawMessage(`true`), key); hitl.ErrorCode(err) != hitl.EINVALID {
			t.Errorf("key %q: got %v, want invalid", key, err)
		}
	}
	if got, err := b.Get(context.Background(), in.ID); err != nil || got.Status != hitl.StatusPending {
		t.Errorf("after refused keys: %v, %v; want still pending", got, err)
	}
}
