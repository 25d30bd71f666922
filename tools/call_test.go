package tools

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/sqlite"
)

// startEngine starts an in-process engine over a new SQLite file.
func startEngine(t *testing.T) *broker.Broker {
	t.Helper()
	store, err := sqlite.Open(filepath.Join(t.TempDir(), "hitl.db"), nil)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	b := broker.New(store, nil)
	if err := b.Start(context.Background()); err != nil {
		t.Fatalf("start broker: %v", err)
	}
	t.Cleanup(func() {
		b.Close()
		store.Close()
	})
	return b
}

var person = hitl.WithCaller(context.Background(), hitl.Caller{Name: "alice", Channel: hitl.ChannelWeb})

// callAsync runs Call in a goroutine.
func callAsync(ctx context.Context, svc hitl.Service, name, args string) <-chan *Result {
	ch := make(chan *Result, 1)
	go func() { ch <- Call(ctx, svc, name, json.RawMessage(args), &CallOptions{SourceAgent: "test-agent"}) }()
	return ch
}

// waiting waits until an agent waits on one pending interaction and
// returns it.
func waiting(t *testing.T, b *broker.Broker) *hitl.Interaction {
	t.Helper()
	deadline := time.After(10 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for b.Waiting() != 1 {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatal("timed out waiting for the agent to wait")
		}
	}
	list, _, err := b.List(context.Background(), hitl.ListFilter{Status: hitl.StatusPending})
	if err != nil || len(list) != 1 {
		t.Fatalf("list pending: %d, %v; want 1", len(list), err)
	}
	return list[0]
}

// answer answers the waiting interaction as alice on the web.
func answer(t *testing.T, b *broker.Broker, value string) *hitl.Interaction {
	t.Helper()
	in := waiting(t, b)
	if _, err := b.Respond(person, in.ID, json.RawMessage(value)); err != nil {
		t.Fatalf("respond %s: %v", value, err)
	}
	return in
}

func receive(t *testing.T, ch <-chan *Result) *Result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("no result after 30s")
		return nil
	}
}

// checkOutcome validates r's structured result against ask_human's
// output schema.
func checkOutcome(t *testing.T, r *Result) {
	t.Helper()
	if r.Outcome == nil {
		t.Fatal("no structured outcome")
	}
	data, err := json.Marshal(r.Outcome)
	if err != nil {
		t.Fatalf("marshal outcome: %v", err)
	}
	var v any
	_ = json.Unmarshal(data, &v)
	if err := resolve(t, AskHuman().OutputSchema).Validate(v); err != nil {
		t.Errorf("outcome %s does not match the output schema: %v", data, err)
	}
}

func TestCallHumanFeedback(t *testing.T) {
	t.Parallel()
	b := startEngine(t)
	ctx := context.Background()

	ch := callAsync(ctx, b, HumanFeedbackName, `{"message_for_user": "Enter the 6-digit code", "unique_id": "otp-1"}`)
	in := answer(t, b, `"582491"`)
	r := receive(t, ch)
	if r.IsError || r.Text != "582491" {
		t.Fatalf("result = %q (error %v), want the code", r.Text, r.IsError)
	}
	if in.IdempotencyKey != "otp-1" || in.SourceAgent != "test-agent" || in.Type != hitl.TypeFreeText {
		t.Errorf("interaction key %q agent %q type %s, want otp-1, test-agent, free_text", in.IdempotencyKey, in.SourceAgent, in.Type)
	}
	if d := in.Deadline.Sub(in.CreatedAt); d != 300*time.Second {
		t.Errorf("deadline %s after creation, want the default 5m", d)
	}

	// Retrying the same request returns its answer without asking again.
	r = Call(ctx, b, HumanFeedbackName, json.RawMessage(`{"message_for_user": "Enter the 6-digit code", "unique_id": "otp-1"}`), nil)
	if r.IsError || r.Text != "582491" {
		t.Errorf("retry = %q (error %v), want the same code", r.Text, r.IsError)
	}
	// Reusing the id for another request is refused, with a hint.
	r = Call(ctx, b, HumanFeedbackName, json.RawMessage(`{"message_for_user": "Something else?", "unique_id": "otp-1"}`), nil)
	if !r.IsError || !strings.Contains(r.Text, "already exists") || !strings.Contains(r.Text, "fresh unique_id") {
		t.Errorf("reused id = %q (error %v), want a conflict with a hint", r.Text, r.IsError)
	}

	// With options, the reply is the chosen option's text.
	ch = callAsync(ctx, b, HumanFeedbackName, `{"message_for_user": "Deploy?", "unique_id": "d-1", "options": ["Yes, deploy", "No, wait"], "timeout_seconds": 60}`)
	in = answer(t, b, `"no_wait"`)
	if r := receive(t, ch); r.IsError || r.Text != "No, wait" {
		t.Errorf("choice = %q (error %v), want the label", r.Text, r.IsError)
	}
	if in.Type != hitl.TypeSingleChoice || in.Deadline.Sub(in.CreatedAt) != time.Minute {
		t.Errorf("type %s, deadline after %s; want single_choice, 1m", in.Type, in.Deadline.Sub(in.CreatedAt))
	}
}

func TestCallAskHuman(t *testing.T) {
	t.Parallel()
	b := startEngine(t)
	ctx := context.Background()
	tests := []struct {
		args, answer, text, value string
	}{
		{`{"question": "Deploy?", "interaction_type": "approval"}`, `"approve"`, "Approved (value true).", `true`},
		{`{"question": "Deploy?", "interaction_type": "approval"}`, `false`, "Rejected (value false).", `false`},
		{`{"question": "Env?", "options": ["Staging", {"key": "prod", "label": "Production"}]}`, `"Production"`, `Chose Production (value "prod").`, `"prod"`},
		{`{"question": "Skip?", "interaction_type": "multi_choice", "options": ["Lint", "E2E"]}`, `["e2e", "lint"]`, `Chose E2E, Lint (value ["e2e","lint"]).`, `["e2e","lint"]`},
		{`{"question": "Skip?", "interaction_type": "multi_choice", "options": ["Lint", "E2E"]}`, `[]`, `Chose none of the options (value []).`, `[]`},
		{`{"question": "Who?", "form_schema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}`, `{"name": "Ada"}`, `Submitted the form: {"name":"Ada"}`, `{"name":"Ada"}`},
		{`{"question": "Why?", "context": "**because**"}`, `"it is Friday"`, `Answered: it is Friday`, `"it is Friday"`},
	}
	for _, tt := range tests {
		ch := callAsync(ctx, b, AskHumanName, tt.args)
		answer(t, b, tt.answer)
		r := receive(t, ch)
		if r.IsError {
			t.Errorf("%s: error %q", tt.args, r.Text)
			continue
		}
		if want := tt.text + "\n(answered by alice via web)"; r.Text != want {
			t.Errorf("%s: text %q, want %q", tt.args, r.Text, want)
		}
		checkOutcome(t, r)
		if got := r.Outcome; got.Status != hitl.StatusAnswered || string(got.Value) != tt.value || got.RespondedBy != "alice" || got.Channel != hitl.ChannelWeb {
			t.Errorf("%s: outcome %+v (value %s), want answered %s by alice via web", tt.args, got, got.Value, tt.value)
		}
	}
}

func TestCallFailures(t *testing.T) {
	t.Parallel()
	b := startEngine(t)
	ctx := context.Background()

	t.Run("expired", func(t *testing.T) {
		r := Call(ctx, b, AskHumanName, json.RawMessage(`{"question": "Anyone?", "timeout": 1}`), nil)
		if !r.IsError || !strings.HasPrefix(r.Text, "timeout waiting for feedback") {
			t.Fatalf("result = %q (error %v), want a timeout error", r.Text, r.IsError)
		}
		checkOutcome(t, r)
		if r.Outcome.Status != hitl.StatusExpired || r.Outcome.Value != nil {
			t.Errorf("outcome = %+v, want expired with no value", r.Outcome)
		}
	})
	t.Run("default on timeout", func(t *testing.T) {
		r := Call(ctx, b, AskHumanName, json.RawMessage(`{"question": "Proceed?", "interaction_type": "approval", "timeout": 1, "default_response": false, "on_timeout": "default"}`), nil)
		if r.IsError || !strings.HasPrefix(r.Text, "No answer before the deadline; the default response applies. Rejected") {
			t.Fatalf("result = %q (error %v), want the default", r.Text, r.IsError)
		}
		if !r.Outcome.TimedOut || r.Outcome.Channel != hitl.ChannelTimeout {
			t.Errorf("outcome = %+v, want timed out via timeout", r.Outcome)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ch := callAsync(ctx, b, AskHumanName, `{"question": "Which branch?"}`)
		in := waiting(t, b)
		if _, err := b.Cancel(person, in.ID, "asked the wrong person"); err != nil {
			t.Fatalf("cancel: %v", err)
		}
		r := receive(t, ch)
		if !r.IsError || !strings.Contains(r.Text, "was cancelled: asked the wrong person") {
			t.Fatalf("result = %q (error %v), want a cancellation error", r.Text, r.IsError)
		}
		checkOutcome(t, r)
	})
	t.Run("context cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		ch := callAsync(cctx, b, HumanFeedbackName, `{"message_for_user": "Drop it?", "unique_id": "drop-1"}`)
		in := waiting(t, b)
		cancel()
		if r := receive(t, ch); !r.IsError {
			t.Fatalf("result = %q, want an error", r.Text)
		}
		got, err := b.Get(ctx, in.ID)
		if err != nil || got.Status != hitl.StatusCancelled {
			t.Errorf("on the server: %v, %v; want cancelled", got.Status, err)
		}
	})
	t.Run("invalid", func(t *testing.T) {
		for _, args := range []string{
			`{"question": "Pick", "interaction_type": "single_choice"}`,
			`{"question": "Form?", "interaction_type": "form", "form_schema": {"type": "string"}}`,
			`{"question": "Huh?", "interaction_type": "quiz"}`,
		} {
			r := Call(ctx, b, AskHumanName, json.RawMessage(args), nil)
			if !r.IsError || !strings.HasPrefix(r.Text, "invalid request: ") || r.Interaction != nil || r.Outcome != nil {
				t.Errorf("%s: result = %q (error %v), want an invalid request and no interaction", args, r.Text, r.IsError)
			}
		}
		if r := Call(ctx, b, "rm_rf", nil, nil); !r.IsError || !strings.Contains(r.Text, "unknown tool") {
			t.Errorf("unknown tool: %q (error %v)", r.Text, r.IsError)
		}
	})
}

func TestCallUnreachable(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.NotFoundHandler())
	url := ts.URL
	ts.Close()
	c := client.New(url, nil)
	r := Call(context.Background(), c, HumanFeedbackName, json.RawMessage(`{"message_for_user": "Code?", "unique_id": "x"}`), nil)
	if !r.IsError {
		t.Fatalf("result = %q, want an error", r.Text)
	}
	for _, want := range []string{"cannot reach the hitl server", url, "connection refused", "hitl serve"} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("text %q should contain %q", r.Text, want)
		}
	}
}

// silentServer is a Service that accepts a question and then never
// reports anything, like a server that went away.
type silentServer struct {
	hitl.Service
	cancels chan string
}

func (s *silentServer) Create(ctx context.Context, req hitl.CreateRequest) (*hitl.Interaction, bool, error) {
	return &hitl.Interaction{ID: "lost", Status: hitl.StatusPending, Deadline: time.Now().Add(time.Duration(req.Timeout * float64(time.Second)))}, true, nil
}

func (s *silentServer) Wait(ctx context.Context, id string) (*hitl.Interaction, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (s *silentServer) Cancel(ctx context.Context, id string, reason string) (*hitl.Interaction, error) {
	s.cancels <- id
	return nil, hitl.ErrUnreachable
}

// TestCallGivesUpAfterDeadline is not parallel: it shortens waitGrace.
func TestCallGivesUpAfterDeadline(t *testing.T) {
	defer func(d time.Duration) { waitGrace = d }(waitGrace)
	waitGrace = 10 * time.Millisecond
	svc := &silentServer{cancels: make(chan string, 1)}
	start := time.Now()
	r := Call(context.Background(), svc, AskHumanName, json.RawMessage(`{"question": "Hello?", "timeout": 1}`), nil)
	if !r.IsError || !strings.Contains(r.Text, "may have stopped") {
		t.Fatalf("result = %q (error %v), want a give-up error", r.Text, r.IsError)
	}
	if took := time.Since(start); took < time.Second {
		t.Errorf("gave up after %s, before the deadline", took)
	}
	select {
	case id := <-svc.cancels:
		if id != "lost" {
			t.Errorf("cancelled %q, want lost", id)
		}
	default:
		t.Errorf("the interaction was not cancelled on giving up")
	}
}
