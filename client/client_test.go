package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/internal/hitltest"
)

func TestCreateGetIdempotent(t *testing.T) {
	t.Parallel()
	ts := hitltest.Start(t, nil)
	c := hitltest.NewClient(t, ts.URL, nil)
	ctx := context.Background()

	req := hitl.CreateRequest{
		Type:           hitl.TypeSingleChoice,
		Question:       "Which region?",
		Options:        hitl.OptionList{{Label: "EU West"}, {Key: "us", Label: "US"}},
		IdempotencyKey: "region-1",
		SourceAgent:    "deployer",
	}
	in, created, err := c.Create(ctx, req)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if !created {
		t.Errorf("created = false, want true")
	}
	if in.ID == "" || in.Status != hitl.StatusPending {
		t.Fatalf("got id %q status %q, want an id and pending", in.ID, in.Status)
	}
	if got, want := in.Options[0].Key, "eu_west"; got != want {
		t.Errorf("derived key = %q, want %q", got, want)
	}

	again, created, err := c.Create(ctx, req)
	if err != nil {
		t.Fatalf("repeat create: %v", err)
	}
	if created {
		t.Errorf("repeat: created = true, want false")
	}
	if again.ID != in.ID {
		t.Errorf("repeat: id %q, want %q", again.ID, in.ID)
	}

	req.Question = "Something else?"
	if _, _, err := c.Create(ctx, req); !errors.Is(err, hitl.ErrConflict) {
		t.Errorf("same key, other question: err = %v, want conflict", err)
	}

	got, err := c.Get(ctx, in.ID)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.Question != "Which region?" || got.SourceAgent != "deployer" {
		t.Errorf("get: question %q agent %q, want %q %q", got.Question, got.SourceAgent, "Which region?", "deployer")
	}
}

func TestList(t *testing.T) {
	t.Parallel()
	ts := hitltest.Start(t, nil)
	c := hitltest.NewClient(t, ts.URL, nil)
	ctx := context.Background()

	var ids []string
	for _, q := range []string{"one?", "two?", "three?"} {
		ids = append(ids, mustCreate(t, c, hitl.CreateRequest{Question: q, IdempotencyKey: "k-" + q}).ID)
	}
	if _, err := c.Cancel(ctx, ids[0], ""); err != nil {
		t.Fatalf("cancel: %v", err)
	}

	pending, next, err := c.List(ctx, hitl.ListFilter{Status: hitl.StatusPending})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if got, want := len(pending), 2; got != want {
		t.Fatalf("pending: got %d, want %d", got, want)
	}
	if next != "" {
		t.Errorf("next cursor = %q, want none", next)
	}

	// Pages of one, newest first, through every interaction.
	var seen []string
	f := hitl.ListFilter{Limit: 1}
	for {
		page, next, err := c.List(ctx, f)
		if err != nil {
			t.Fatalf("list page: %v", err)
		}
		for _, in := range page {
			seen = append(seen, in.ID)
		}
		if next == "" {
			break
		}
		f.Cursor = next
	}
	if got, want := strings.Join(seen, ","), strings.Join([]string{ids[2], ids[1], ids[0]}, ","); got != want {
		t.Errorf("paged ids = %s, want %s", got, want)
	}

	byKey, _, err := c.List(ctx, hitl.ListFilter{IdempotencyKey: "k-two?"})
	if err != nil {
		t.Fatalf("list by key: %v", err)
	}
	if len(byKey) != 1 || byKey[0].ID != ids[1] {
		t.Errorf("by key: got %d interactions, want just %s", len(byKey), ids[1])
	}

	// By project, in the list and the counts.
	shop := mustCreate(t, c, hitl.CreateRequest{Question: "In the shop?", Metadata: map[string]any{"cwd": "/home/dev/shop"}})
	byProject, _, err := c.List(ctx, hitl.ListFilter{Project: "/home/dev/shop"})
	if err != nil || len(byProject) != 1 || byProject[0].ID != shop.ID {
		t.Errorf("by project: %d interactions, %v; want just %s", len(byProject), err, shop.ID)
	}
	if n, err := c.Counts(ctx, hitl.ListFilter{Status: hitl.StatusPending, Project: "/home/dev/shop"}); err != nil || n.Total != 1 {
		t.Errorf("counts by project: %+v, %v; want 1", n, err)
	}

	if _, _, err := c.List(ctx, hitl.ListFilter{Status: "bogus"}); !errors.Is(err, hitl.ErrInvalid) {
		t.Errorf("bad status: err = %v, want invalid", err)
	}
}

func TestRespondAndWait(t *testing.T) {
	t.Parallel()
	ts := hitltest.Start(t, nil)
	agent := hitltest.NewClient(t, ts.URL, nil)
	person := hitltest.NewClient(t, ts.URL, &client.Options{Channel: hitl.ChannelCLI})
	ctx := context.Background()

	in := mustCreate(t, agent, hitl.CreateRequest{Type: hitl.TypeApproval, Question: "Deploy?"})
	done := make(chan waitResult, 1)
	go func() {
		got, err := agent.Wait(ctx, in.ID)
		done <- waitResult{got, err}
	}()
	hitltest.WaitFor(t, "the agent to wait", func() bool { return ts.Broker.Waiting() == 1 })

	answered, err := person.Respond(ctx, in.ID, json.RawMessage(`"yes"`))
	if err != nil {
		t.Fatalf("respond: %v", err)
	}
	if got, want := string(answered.Result.Value), "true"; got != want {
		t.Errorf("normalised value = %s, want %s", got, want)
	}
	if got, want := answered.Result.Channel, hitl.ChannelCLI; got != want {
		t.Errorf("channel = %q, want %q", got, want)
	}

	r := receive(t, done, 10*time.Second)
	if r.err != nil {
		t.Fatalf("wait: %v", r.err)
	}
	if r.in.Status != hitl.StatusAnswered || string(r.in.Result.Value) != "true" {
		t.Errorf("wait: status %q value %s, want answered true", r.in.Status, r.in.Result.Value)
	}

	// Waiting on a terminal interaction returns at once.
	again, err := agent.Wait(ctx, in.ID)
	if err != nil || again.Status != hitl.StatusAnswered {
		t.Errorf("wait again: status %v err %v, want answered, nil", again, err)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	ts := hitltest.Start(t, nil)
	c := hitltest.NewClient(t, ts.URL, nil)
	ctx := context.Background()

	answered := mustCreate(t, c, hitl.CreateRequest{Type: hitl.TypeApproval, Question: "first?"})
	if _, err := c.Respond(ctx, answered.ID, json.RawMessage(`true`)); err != nil {
		t.Fatalf("first answer: %v", err)
	}
	cancelled := mustCreate(t, c, hitl.CreateRequest{Question: "withdrawn?"})
	if _, err := c.Cancel(ctx, cancelled.ID, "changed my mind"); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	expired := mustCreate(t, c, hitl.CreateRequest{Question: "quick?", Timeout: 0.05})
	got, err := c.Wait(ctx, expired.ID)
	if err != nil {
		t.Fatalf("wait for expiry: %v", err)
	}
	if got.Status != hitl.StatusExpired {
		t.Fatalf("after deadline: status %q, want expired", got.Status)
	}
	approval := mustCreate(t, c, hitl.CreateRequest{Type: hitl.TypeApproval, Question: "valid?"})

	tests := []struct {
		name string
		call func() error
		want *hitl.Error
	}{
		{"get unknown", func() error { _, err := c.Get(ctx, "no-such-id"); return err }, hitl.ErrNotFound},
		{"wait unknown", func() error { _, err := c.Wait(ctx, "no-such-id"); return err }, hitl.ErrNotFound},
		{"respond unknown", func() error { _, err := c.Respond(ctx, "no-such-id", json.RawMessage(`"x"`)); return err }, hitl.ErrNotFound},
		{"empty id", func() error { _, err := c.Get(ctx, ""); return err }, hitl.ErrInvalid},
		{"second answer", func() error { _, err := c.Respond(ctx, answered.ID, json.RawMessage(`false`)); return err }, hitl.ErrConflict},
		{"answer cancelled", func() error { _, err := c.Respond(ctx, cancelled.ID, json.RawMessage(`"x"`)); return err }, hitl.ErrCancelled},
		{"answer expired", func() error { _, err := c.Respond(ctx, expired.ID, json.RawMessage(`"x"`)); return err }, hitl.ErrExpired},
		{"invalid value", func() error { _, err := c.Respond(ctx, approval.ID, json.RawMessage(`"maybe"`)); return err }, hitl.ErrValue},
		// The respond routes refuse a body without a value as incomplete (400).
		{"missing value", func() error { _, err := c.Respond(ctx, approval.ID, nil); return err }, hitl.ErrInvalid},
		{"cancel answered", func() error { _, err := c.Cancel(ctx, answered.ID, ""); return err }, hitl.ErrConflict},
		{"invalid request", func() error {
			_, _, err := c.Create(ctx, hitl.CreateRequest{Type: hitl.TypeSingleChoice, Question: "no options?"})
			return err
		}, hitl.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want code %s", err, tt.want.Code)
			}
			var he *hitl.Error
			if !errors.As(err, &he) || he.Message == "" {
				t.Errorf("err = %#v, want a *hitl.Error with the server's message", err)
			}
		})
	}
}

func TestNonJSONError(t *testing.T) {
	t.Parallel()
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "<html>bad gateway</html>", http.StatusBadGateway)
	}))
	defer proxy.Close()
	c := hitltest.NewClient(t, proxy.URL, nil)

	_, err := c.Get(context.Background(), "abc")
	var se *client.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("err = %#v, want *client.StatusError", err)
	}
	if got, want := se.StatusCode, http.StatusBadGateway; got != want {
		t.Errorf("status = %d, want %d", got, want)
	}
	if !strings.Contains(err.Error(), "502") || !strings.Contains(err.Error(), "bad gateway") {
		t.Errorf("message %q should give the status and the body", err)
	}
	if code := hitl.ErrorCode(err); code != hitl.EINTERNAL {
		t.Errorf("ErrorCode = %q, want %q", code, hitl.EINTERNAL)
	}
}

func TestUnreachable(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.NotFoundHandler())
	url := ts.URL
	ts.Close()
	c := hitltest.NewClient(t, url, nil)
	if _, _, err := c.Create(context.Background(), hitl.CreateRequest{Question: "anyone?"}); err == nil {
		t.Fatal("create against a closed port: err = nil, want an error")
	} else if !strings.Contains(err.Error(), url) {
		t.Errorf("err %q should name the server %s", err, url)
	}
}

func TestHeaders(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		auth []string
	)
	ts := hitltest.Start(t, &hitltest.Options{Wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			auth = append(auth, r.Header.Get("Authorization"))
			mu.Unlock()
			h.ServeHTTP(w, r)
		})
	}})
	c := hitltest.NewClient(t, ts.URL+"/", &client.Options{Token: "s3cret"})
	mustCreate(t, c, hitl.CreateRequest{Question: "who am I?"})
	hitltest.NewClient(t, ts.URL, nil).Get(context.Background(), "x")

	mu.Lock()
	defer mu.Unlock()
	if got, want := strings.Join(auth, "|"), "Bearer s3cret|"; got != want {
		t.Errorf("Authorization headers = %q, want %q", got, want)
	}
}

func TestWaitRetriesUnavailable(t *testing.T) {
	t.Parallel()
	var (
		mu      sync.Mutex
		refused int
	)
	ts := hitltest.Start(t, &hitltest.Options{Wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			refuse := strings.HasSuffix(r.URL.Path, "/wait") && refused < 3
			if refuse {
				refused++
			}
			mu.Unlock()
			if refuse {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusServiceUnavailable)
				w.Write([]byte(`{"error":{"code":"unavailable","message":"not ready"}}`))
				return
			}
			h.ServeHTTP(w, r)
		})
	}})
	c := hitltest.NewClient(t, ts.URL, nil)
	in := mustCreate(t, c, hitl.CreateRequest{Question: "still there?"})
	if _, err := c.Respond(context.Background(), in.ID, json.RawMessage(`"yes"`)); err != nil {
		t.Fatalf("respond: %v", err)
	}
	got, err := c.Wait(context.Background(), in.ID)
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	if got.Status != hitl.StatusAnswered {
		t.Errorf("status = %q, want answered", got.Status)
	}
	mu.Lock()
	defer mu.Unlock()
	if refused != 3 {
		t.Errorf("refused %d waits, want 3 (then retried)", refused)
	}
}

func TestWaitContextEnds(t *testing.T) {
	t.Parallel()
	ts := hitltest.Start(t, nil)
	c := hitltest.NewClient(t, ts.URL, nil)
	in := mustCreate(t, c, hitl.CreateRequest{Question: "patience?"})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan waitResult, 1)
	go func() {
		got, err := c.Wait(ctx, in.ID)
		done <- waitResult{got, err}
	}()
	hitltest.WaitFor(t, "the wait to reach the server", func() bool { return ts.Broker.Waiting() == 1 })
	cancel()
	r := receive(t, done, 10*time.Second)
	if !errors.Is(r.err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", r.err)
	}
	// Wait alone does not cancel the interaction.
	got, err := c.Get(context.Background(), in.ID)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.Status != hitl.StatusPending {
		t.Errorf("status = %q, want still pending", got.Status)
	}
}

func TestWaitShortPolls(t *testing.T) {
	t.Parallel()
	var polls atomic.Int32
	ts := hitltest.Start(t, &hitltest.Options{Wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/wait") {
				if got, want := r.URL.Query().Get("timeout"), "0.05"; got != want {
					t.Errorf("wait timeout = %q, want %q", got, want)
				}
				defer polls.Add(1)
			}
			h.ServeHTTP(w, r)
		})
	}})
	c := hitltest.NewClient(t, ts.URL, &client.Options{PollTimeout: 50 * time.Millisecond})
	in := mustCreate(t, c, hitl.CreateRequest{Question: "repolled?"})
	done := make(chan waitResult, 1)
	go func() {
		got, err := c.Wait(context.Background(), in.ID)
		done <- waitResult{got, err}
	}()
	// Let several polls come back pending before answering.
	hitltest.WaitFor(t, "a few polls", func() bool { return polls.Load() >= 3 })
	if _, err := c.Respond(context.Background(), in.ID, json.RawMessage(`"done"`)); err != nil {
		t.Fatalf("respond: %v", err)
	}
	r := receive(t, done, 10*time.Second)
	if r.err != nil || r.in.Status != hitl.StatusAnswered {
		t.Fatalf("wait: %v, %v; want answered", r.in, r.err)
	}
	if got, want := string(r.in.Result.Value), `"done"`; got != want {
		t.Errorf("value = %s, want %s", got, want)
	}
}
