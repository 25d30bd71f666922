package ask_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/ask"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/internal/hitltest"
)

// release is the form the Form tests ask for.
type release struct {
	Version string   `json:"version" jsonschema:"the version to release"`
	Notes   string   `json:"notes,omitempty"`
	Tags    []string `json:"tags,omitempty"`
	Canary  bool     `json:"canary"`
}

func TestHelpers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, e := range newEnvs(t) {
		t.Run(e.name, func(t *testing.T) {
			t.Run("Text", func(t *testing.T) {
				ch := async(func() (string, error) {
					return ask.Text(ctx, e.agent, "Enter the 6-digit code sent to your email", &ask.Options{
						Context:        "Signing in to the **billing** console.",
						Timeout:        10 * time.Minute,
						IdempotencyKey: "otp-1",
						SourceAgent:    "billing-bot",
						SessionID:      "s-1",
					})
				})
				in := e.answer(t, `"582491"`)
				r := receive(t, ch)
				if r.err != nil {
					t.Fatalf("Text: %v", r.err)
				}
				if got, want := r.v, "582491"; got != want {
					t.Errorf("Text = %q, want %q", got, want)
				}
				if in.Type != hitl.TypeFreeText || in.IdempotencyKey != "otp-1" || in.SourceAgent != "billing-bot" || in.SessionID != "s-1" || !strings.Contains(in.Context, "billing") {
					t.Errorf("request = %+v, want free_text with the options' key, agent, session and context", in)
				}
				if d := in.Deadline.Sub(in.CreatedAt); d != 10*time.Minute {
					t.Errorf("deadline is %s after creation, want 10m", d)
				}
			})
			t.Run("YesNo", func(t *testing.T) {
				for _, tt := range []struct{ answer, label string }{{`"Hold"`, "Hold"}, {`true`, "Deploy"}} {
					want := tt.label == "Deploy"
					ch := async(func() (bool, error) {
						return ask.YesNo(ctx, e.agent, "Deploy build 1432?", "Deploy", "Hold", nil)
					})
					in := e.answer(t, tt.answer)
					r := receive(t, ch)
					if r.err != nil || r.v != want {
						t.Errorf("answer %s: YesNo = %v, %v; want %v, nil", tt.answer, r.v, r.err, want)
					}
					if got := []string{in.Options[0].Label, in.Options[1].Label}; !slices.Equal(got, []string{"Deploy", "Hold"}) {
						t.Errorf("labels = %q, want Deploy, Hold", got)
					}
				}
			})
			t.Run("YesNoDefaultLabels", func(t *testing.T) {
				ch := async(func() (bool, error) { return ask.YesNo(ctx, e.agent, "Proceed?", "", "", nil) })
				in := e.answer(t, `"reject"`)
				if r := receive(t, ch); r.err != nil || r.v {
					t.Errorf("YesNo = %v, %v; want false, nil", r.v, r.err)
				}
				if got := []string{in.Options[0].Label, in.Options[1].Label}; !slices.Equal(got, []string{"Approve", "Reject"}) {
					t.Errorf("labels = %q, want Approve, Reject", got)
				}
			})
			t.Run("Choice", func(t *testing.T) {
				type choice struct {
					key   string
					index int
				}
				ch := async(func() (choice, error) {
					k, i, err := ask.Choice(ctx, e.agent, "Which environment?", []string{"Staging", "Production", "Dev box"}, nil)
					return choice{k, i}, err
				})
				e.answer(t, `"Production"`)
				r := receive(t, ch)
				if r.err != nil {
					t.Fatalf("Choice: %v", r.err)
				}
				if got, want := r.v, (choice{"production", 1}); got != want {
					t.Errorf("Choice = %+v, want %+v", got, want)
				}
			})
			t.Run("Choices", func(t *testing.T) {
				type choices struct {
					keys    []string
					indexes []int
				}
				ch := async(func() (choices, error) {
					k, i, err := ask.Choices(ctx, e.agent, "Which checks may be skipped?", []string{"Lint", "Unit tests", "E2E tests"}, nil)
					return choices{k, i}, err
				})
				e.answer(t, `["E2E tests", "lint"]`)
				r := receive(t, ch)
				if r.err != nil {
					t.Fatalf("Choices: %v", r.err)
				}
				if !slices.Equal(r.v.keys, []string{"e2e_tests", "lint"}) || !slices.Equal(r.v.indexes, []int{2, 0}) {
					t.Errorf("Choices = %q %v, want [e2e_tests lint] [2 0]", r.v.keys, r.v.indexes)
				}
			})
			t.Run("Form", func(t *testing.T) {
				ch := async(func() (release, error) {
					return ask.Form[release](ctx, e.agent, "Release details?", &ask.Options{Default: release{Version: "1.2.3"}})
				})
				in := e.answer(t, `{"version": "1.3.0", "tags": ["lts"], "canary": true}`)
				r := receive(t, ch)
				if r.err != nil {
					t.Fatalf("Form: %v", r.err)
				}
				if diff := cmp.Diff(release{Version: "1.3.0", Tags: []string{"lts"}, Canary: true}, r.v); diff != "" {
					t.Errorf("Form (-want +got):\n%s", diff)
				}
				schema, err := ask.Schema[release]()
				if err != nil {
					t.Fatalf("Schema: %v", err)
				}
				if got, want := string(in.FormSchema), string(schema); got != want {
					t.Errorf("form_schema sent = %s, want %s", got, want)
				}
				if got, want := string(in.DefaultResponse), `{"canary":false,"version":"1.2.3"}`; got != want {
					t.Errorf("default_response = %s, want %s", got, want)
				}
			})
			t.Run("FormRejectsInvalidAnswers", func(t *testing.T) {
				ch := async(func() (release, error) { return ask.Form[release](ctx, e.agent, "Release details?", nil) })
				in := e.waiting(t)
				// Missing a required field: refused, and the agent keeps waiting.
				if _, err := e.person.Respond(ctx, in.ID, json.RawMessage(`{"notes": "no version"}`)); !errors.Is(err, hitl.ErrValue) {
					t.Fatalf("invalid form answer: err = %v, want invalid value", err)
				}
				if _, err := e.person.Respond(ctx, in.ID, json.RawMessage(`{"version": "2.0.0", "canary": false}`)); err != nil {
					t.Fatalf("valid form answer: %v", err)
				}
				if r := receive(t, ch); r.err != nil || r.v.Version != "2.0.0" {
					t.Errorf("Form = %+v, %v; want version 2.0.0", r.v, r.err)
				}
			})
		})
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, e := range newEnvs(t) {
		t.Run(e.name, func(t *testing.T) {
			t.Run("Expired", func(t *testing.T) {
				_, err := ask.Text(ctx, e.agent, "Anyone there?", &ask.Options{Timeout: 50 * time.Millisecond})
				if !errors.Is(err, hitl.ErrExpired) {
					t.Fatalf("err = %v, want expired", err)
				}
				if !strings.Contains(hitl.ErrorMessage(err), "timeout waiting for feedback") {
					t.Errorf("message %q should say timeout waiting for feedback", hitl.ErrorMessage(err))
				}
			})
			t.Run("DefaultOnTimeout", func(t *testing.T) {
				ok, err := ask.YesNo(ctx, e.agent, "Skip the canary?", "", "", &ask.Options{
					Timeout: 50 * time.Millisecond, Default: false, UseDefaultOnTimeout: true,
				})
				if err != nil || ok {
					t.Errorf("YesNo = %v, %v; want the default false, nil", ok, err)
				}
			})
			t.Run("CancelledByPerson", func(t *testing.T) {
				ch := async(func() (string, error) { return ask.Text(ctx, e.agent, "Which branch?", nil) })
				in := e.waiting(t)
				if _, err := e.person.Cancel(ctx, in.ID, "wrong question"); err != nil {
					t.Fatalf("cancel: %v", err)
				}
				r := receive(t, ch)
				if !errors.Is(r.err, hitl.ErrCancelled) {
					t.Fatalf("err = %v, want cancelled", r.err)
				}
				if !strings.Contains(r.err.Error(), "wrong question") {
					t.Errorf("err %q should give the reason", r.err)
				}
			})
			t.Run("Invalid", func(t *testing.T) {
				if _, _, err := ask.Choice(ctx, e.agent, "Pick one", nil, nil); !errors.Is(err, hitl.ErrInvalid) {
					t.Errorf("no choices: err = %v, want invalid", err)
				}
				if _, err := ask.Text(ctx, e.agent, "  ", nil); !errors.Is(err, hitl.ErrInvalid) {
					t.Errorf("blank question: err = %v, want invalid", err)
				}
				if _, err := ask.Form[chan int](ctx, e.agent, "A channel?", nil); !errors.Is(err, hitl.ErrInvalid) {
					t.Errorf("form of a channel: err = %v, want invalid", err)
				}
				if _, err := ask.Form[int](ctx, e.agent, "A number?", nil); !errors.Is(err, hitl.ErrInvalid) {
					t.Errorf("form of an int: err = %v, want invalid (a form is an object)", err)
				}
			})
			t.Run("IdempotencyKey", func(t *testing.T) {
				opts := &ask.Options{IdempotencyKey: "release-notes-" + e.name}
				ch := async(func() (string, error) { return ask.Text(ctx, e.agent, "Release notes?", opts) })
				e.waiting(t)
				// The same key for another question is a conflict, at once.
				if _, err := ask.Text(ctx, e.agent, "Something else?", opts); !errors.Is(err, hitl.ErrConflict) {
					t.Errorf("same key, other question: err = %v, want conflict", err)
				}
				e.answer(t, `"Fixes #12"`)
				if r := receive(t, ch); r.err != nil || r.v != "Fixes #12" {
					t.Fatalf("Text = %q, %v; want the answer", r.v, r.err)
				}
				// A retry of the same question gets the same answer, without asking again.
				again, err := ask.Text(ctx, e.agent, "Release notes?", opts)
				if err != nil || again != "Fixes #12" {
					t.Errorf("retry = %q, %v; want the earlier answer", again, err)
				}
			})
			t.Run("ContextCancelled", func(t *testing.T) {
				cctx, cancel := context.WithCancel(ctx)
				ch := async(func() (bool, error) { return ask.YesNo(cctx, e.agent, "Drop the table?", "", "", nil) })
				in := e.waiting(t)
				cancel()
				if r := receive(t, ch); !errors.Is(r.err, context.Canceled) {
					t.Fatalf("err = %v, want context.Canceled", r.err)
				}
				got, err := e.broker.Get(ctx, in.ID)
				if err != nil {
					t.Fatalf("get: %v", err)
				}
				if got.Status != hitl.StatusCancelled || got.Result.Reason != ask.CancelReason {
					t.Errorf("on the server: %s (%+v), want cancelled with reason %s", got.Status, got.Result, ask.CancelReason)
				}
			})
			t.Run("ContextEndsDuringCreate", func(t *testing.T) {
				// The server stores the question, but ctx ends before its
				// reply arrives. Without an idempotency key of the caller's,
				// Ask still finds the question again and cancels it.
				cctx, cancel := context.WithCancel(ctx)
				svc := &cutOff{Service: e.agent, cancel: cancel}
				_, err := ask.Ask(cctx, svc, hitl.CreateRequest{Question: "Cut off?"})
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("err = %v, want context.Canceled", err)
				}
				all, _, err := e.broker.List(ctx, hitl.ListFilter{Limit: hitl.MaxListLimit})
				if err != nil {
					t.Fatalf("list: %v", err)
				}
				var asked []*hitl.Interaction
				for _, in := range all {
					if in.Question == "Cut off?" {
						asked = append(asked, in)
					}
				}
				if len(asked) != 1 || asked[0].Status != hitl.StatusCancelled || asked[0].Result.Reason != ask.CancelReason {
					t.Fatalf("interactions asked: %+v; want one, cancelled with reason %s", asked, ask.CancelReason)
				}
				if svc.creates != 2 {
					t.Errorf("%d creates, want 2 (the cut-off one and the repeat)", svc.creates)
				}
			})
			t.Run("ContextAlreadyCancelled", func(t *testing.T) {
				cctx, cancel := context.WithCancel(ctx)
				cancel()
				if _, err := ask.Text(cctx, e.agent, "Too late?", &ask.Options{IdempotencyKey: "late-" + e.name}); !errors.Is(err, context.Canceled) {
					t.Fatalf("err = %v, want context.Canceled", err)
				}
				list, _, err := e.broker.List(ctx, hitl.ListFilter{IdempotencyKey: "late-" + e.name})
				if err != nil {
					t.Fatalf("list: %v", err)
				}
				if len(list) > 0 {
					t.Errorf("a context that had ended asked anyway: %+v", list)
				}
			})
		})
	}
}

// cutOff is a Service whose first Create reaches the engine but whose
// caller's context then ends before the reply: cancel is called, and the
// caller gets its context's error.
type cutOff struct {
	hitl.Service
	cancel  context.CancelFunc
	creates int
}

func (c *cutOff) Create(ctx context.Context, req hitl.CreateRequest) (*hitl.Interaction, bool, error) {
	c.creates++
	in, existed, err := c.Service.Create(context.WithoutCancel(ctx), req)
	if c.creates > 1 {
		return in, existed, err
	}
	c.cancel()
	return nil, false, ctx.Err()
}

// pendingOnce is a Service whose first Wait hands the interaction back
// still pending, as a Service is allowed to.
type pendingOnce struct {
	hitl.Service
	waits int
}

func (p *pendingOnce) Wait(ctx context.Context, id string) (*hitl.Interaction, error) {
	p.waits++
	if p.waits == 1 {
		return p.Service.Get(ctx, id)
	}
	return p.Service.Wait(ctx, id)
}

func TestAskWaitsAgainWhenHandedBackPending(t *testing.T) {
	t.Parallel()
	e := newEnvs(t)[0]
	svc := &pendingOnce{Service: e.agent}
	ch := async(func() (string, error) { return ask.Text(context.Background(), svc, "Still there?", nil) })
	e.answer(t, `"yes"`) // answered once the second Wait is in
	r := receive(t, ch)
	if r.err != nil || r.v != "yes" {
		t.Fatalf("Text = %q, %v; want yes", r.v, r.err)
	}
	if svc.waits != 2 {
		t.Errorf("Wait called %d times, want 2", svc.waits)
	}
}

// countWaits is a Service that counts its Waits.
type countWaits struct {
	hitl.Service
	waits int
}

func (c *countWaits) Wait(ctx context.Context, id string) (*hitl.Interaction, error) {
	c.waits++
	return c.Service.Wait(ctx, id)
}

// TestAskDoesNotWaitForWhatEndedAtOnce: a question that ends as it is
// asked (here the repeat of an answered one's idempotency key; a rule's
// decision is the other case) is returned from the create, with no wait:
// over HTTP a wait is one more request.
func TestAskDoesNotWaitForWhatEndedAtOnce(t *testing.T) {
	t.Parallel()
	for _, e := range newEnvs(t) {
		t.Run(e.name, func(t *testing.T) {
			req := hitl.CreateRequest{Type: hitl.TypeApproval, Question: "Ship it?", IdempotencyKey: "ship-" + e.name}
			ch := async(func() (*hitl.Interaction, error) { return ask.Ask(context.Background(), e.agent, req) })
			e.answer(t, "true")
			first := receive(t, ch)
			if first.err != nil {
				t.Fatal(first.err)
			}
			svc := &countWaits{Service: e.agent}
			in, err := ask.Ask(context.Background(), svc, req)
			if err != nil || in.ID != first.v.ID || in.Status != hitl.StatusAnswered {
				t.Fatalf("Ask again: %v, %v; want %s answered", in, err, first.v.ID)
			}
			if svc.waits != 0 {
				t.Errorf("Wait called %d times for a question answered before it was asked again, want 0", svc.waits)
			}
		})
	}
}

// TestAskSurvivesRestart stops the server while a helper waits over HTTP,
// starts a new one on the same SQLite file and address, answers there, and
// expects the helper to return that answer.
func TestAskSurvivesRestart(t *testing.T) {
	t.Parallel()
	first := hitltest.Start(t, nil)
	logs := hitltest.NewLogSignal("wait failed; retrying")
	agent := hitltest.NewClient(t, first.URL, &client.Options{Logger: slog.New(logs)})

	ch := async(func() (bool, error) {
		return ask.YesNo(context.Background(), agent, "Still there after a restart?", "", "", nil)
	})
	hitltest.WaitFor(t, "the long-poll to reach the first server", func() bool { return first.Broker.Waiting() == 1 })
	list, _, err := first.Broker.List(context.Background(), hitl.ListFilter{Status: hitl.StatusPending})
	if err != nil || len(list) != 1 {
		t.Fatalf("list pending: %d, %v; want 1", len(list), err)
	}
	first.Stop()
	select {
	case <-logs.C:
	case <-time.After(10 * time.Second):
		t.Fatal("the agent never noticed the server was gone")
	}
	select {
	case r := <-ch:
		t.Fatalf("YesNo returned while the server was down: %v, %v", r.v, r.err)
	default:
	}

	second := first.Restart(t)
	if _, err := hitltest.NewClient(t, second.URL, nil).Respond(context.Background(), list[0].ID, json.RawMessage(`"approve"`)); err != nil {
		t.Fatalf("respond on the second server: %v", err)
	}
	if r := receive(t, ch); r.err != nil || !r.v {
		t.Errorf("YesNo = %v, %v; want true, nil", r.v, r.err)
	}
}

func TestOutcome(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status hitl.Status
		want   error
	}{
		{hitl.StatusAnswered, nil},
		{hitl.StatusExpired, hitl.ErrExpired},
		{hitl.StatusCancelled, hitl.ErrCancelled},
		{hitl.StatusPending, hitl.ErrConflict},
	}
	for _, tt := range tests {
		err := ask.Outcome(&hitl.Interaction{ID: "x", Status: tt.status})
		if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.status, err, tt.want)
		}
	}
}
