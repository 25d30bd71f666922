package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/mcpserver"
	"github.com/hitl-sh/hitl/tools"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestListTools(t *testing.T) {
	t.Parallel()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			s := k.connect(t, newFixture(t))
			res, err := s.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatalf("list tools: %v", err)
			}
			want := append(tools.All(), tools.PermissionPrompt())
			if len(res.Tools) != len(want) {
				t.Fatalf("%d tools, want %d", len(res.Tools), len(want))
			}
			for i, got := range res.Tools {
				w := want[i]
				if got.Name != w.Name || got.Description != w.Description || got.Title != w.Title {
					t.Errorf("tool %d = %s %q, want %s %q", i, got.Name, got.Title, w.Name, w.Title)
				}
				var in, out any
				_ = json.Unmarshal(w.InputSchema, &in)
				if diff := cmp.Diff(in, got.InputSchema); diff != "" {
					t.Errorf("%s input schema (-want +got):\n%s", w.Name, diff)
				}
				if w.OutputSchema != nil {
					_ = json.Unmarshal(w.OutputSchema, &out)
				}
				if diff := cmp.Diff(out, got.OutputSchema); diff != "" {
					t.Errorf("%s output schema (-want +got):\n%s", w.Name, diff)
				}
			}
		})
	}
}

func TestHumanFeedbackBlocksUntilAnswered(t *testing.T) {
	t.Parallel()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			s := k.connect(t, f)
			c := s.start(context.Background(), &mcp.CallToolParams{Name: tools.HumanFeedbackName, Arguments: map[string]any{
				"message_for_user": "Enter the 6-digit code sent to your email",
				"unique_id":        "otp-1",
			}})
			in := f.pending(t, 1)
			if !c.running() {
				t.Fatal("the tool call returned before anyone answered")
			}
			if in.CreatedVia != hitl.ChannelMCP || in.SourceAgent != clientName || in.IdempotencyKey != "otp-1" {
				t.Errorf("interaction created via %q by agent %q with key %q; want mcp, %s, otp-1", in.CreatedVia, in.SourceAgent, in.IdempotencyKey, clientName)
			}
			if _, err := f.person.Respond(context.Background(), in.ID, json.RawMessage(`"582491"`)); err != nil {
				t.Fatalf("respond: %v", err)
			}
			res, err := c.wait(t)
			if err != nil {
				t.Fatalf("call tool: %v", err)
			}
			if res.IsError || text(t, res) != "582491" {
				t.Errorf("result %q (isError %v), want the code", text(t, res), res.IsError)
			}
			if res.StructuredContent != nil {
				t.Errorf("human_feedback returned structured content %v, want text only", res.StructuredContent)
			}
		})
	}
}

func TestAskHumanStructuredResult(t *testing.T) {
	t.Parallel()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			s := k.connect(t, f)
			c := s.start(context.Background(), &mcp.CallToolParams{Name: tools.AskHumanName, Arguments: map[string]any{
				"question":         "Which environment?",
				"options":          []any{"Staging", map[string]any{"key": "prod", "label": "Production"}},
				"context":          "Build 1432 passed all checks.",
				"timeout":          600,
				"interaction_type": "single_choice",
			}})
			in := f.pending(t, 1)
			if _, err := f.person.Respond(context.Background(), in.ID, json.RawMessage(`"Production"`)); err != nil {
				t.Fatalf("respond: %v", err)
			}
			res, err := c.wait(t)
			if err != nil {
				t.Fatalf("call tool: %v", err)
			}
			if res.IsError {
				t.Fatalf("isError: %s", text(t, res))
			}
			if got := text(t, res); !strings.HasPrefix(got, `Chose Production (value "prod").`) {
				t.Errorf("text = %q, want the choice", got)
			}
			var got map[string]any
			data, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatalf("structured content %s: %v", data, err)
			}
			want := map[string]any{"status": "answered", "value": "prod", "responded_by": hitl.LocalCaller, "channel": hitl.ChannelWeb, "interaction_id": in.ID}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("structured content (-want +got):\n%s", diff)
			}
		})
	}
}

func TestToolErrors(t *testing.T) {
	t.Parallel()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			s := k.connect(t, f)
			ctx := context.Background()

			// Nobody answers within the timeout.
			res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tools.AskHumanName, Arguments: map[string]any{"question": "Anyone?", "timeout": 1}})
			if err != nil {
				t.Fatalf("timeout: protocol error %v, want a tool error", err)
			}
			if !res.IsError || !strings.HasPrefix(text(t, res), "timeout waiting for feedback") {
				t.Errorf("timeout: %q (isError %v), want a timeout tool error", text(t, res), res.IsError)
			}

			// Someone cancels it on the server.
			c := s.start(ctx, &mcp.CallToolParams{Name: tools.HumanFeedbackName, Arguments: map[string]any{"message_for_user": "Which branch?", "unique_id": "b-1"}})
			in := f.pending(t, 1)
			if _, err := f.person.Cancel(ctx, in.ID, "asked in the wrong channel"); err != nil {
				t.Fatalf("cancel: %v", err)
			}
			res, err = c.wait(t)
			if err != nil {
				t.Fatalf("cancelled: protocol error %v, want a tool error", err)
			}
			if !res.IsError || !strings.Contains(text(t, res), "cancelled: asked in the wrong channel") {
				t.Errorf("cancelled: %q (isError %v), want a cancellation tool error", text(t, res), res.IsError)
			}

			// Invalid requests, caught by the tool or by the engine.
			for _, args := range []map[string]any{
				{"message_for_user": "Code?"},
				{"message_for_user": "Code?", "unique_id": "x", "timeout_seconds": 5},
			} {
				res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tools.HumanFeedbackName, Arguments: args})
				if err != nil || !res.IsError || !strings.HasPrefix(text(t, res), "invalid request: ") {
					t.Errorf("human_feedback %v: %v, %v; want an invalid-request tool error", args, res, err)
				}
			}
			// An argument the tool's schema does not have (additionalProperties:
			// false) is refused, not dropped: nothing is asked.
			for name, args := range map[string]map[string]any{
				tools.HumanFeedbackName: {"message_for_user": "Delete the database?", "unique_id": "db-1", "targets": map[string]any{"users": []string{"dba"}}},
				tools.AskHumanName:      {"question": "Delete the database?", "interaction_type": "approval", "approver": "dba"},
			} {
				// Bounded, so that a call that asks fails rather than waits.
				cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				res, err := s.CallTool(cctx, &mcp.CallToolParams{Name: name, Arguments: args})
				cancel()
				if err != nil || !res.IsError || !strings.HasPrefix(text(t, res), "invalid request: unknown argument ") {
					t.Errorf("%s with an unknown argument: %v, %v; want an invalid-request tool error", name, res, err)
				}
			}
			if list, _, err := f.broker.List(ctx, hitl.ListFilter{Status: hitl.StatusPending}); err != nil || len(list) != 0 {
				t.Errorf("pending after refused calls: %d (%v), want none", len(list), err)
			}
			res, err = s.CallTool(ctx, &mcp.CallToolParams{Name: tools.AskHumanName, Arguments: map[string]any{"question": "Pick", "interaction_type": "multi_choice"}})
			if err != nil || !res.IsError || text(t, res) != "invalid request: multi_choice needs at least one option" {
				t.Errorf("ask_human without options: %v, %v; want an invalid-request tool error", res, err)
			}

			// A tool that does not exist is a protocol error.
			if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "rm_rf"}); err == nil {
				t.Errorf("unknown tool: err = nil, want a protocol error")
			}
		})
	}
}

func TestCancelledCallCancelsInteraction(t *testing.T) {
	t.Parallel()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			s := k.connect(t, f)
			ctx, cancel := context.WithCancel(context.Background())
			c := s.start(ctx, &mcp.CallToolParams{Name: tools.AskHumanName, Arguments: map[string]any{"question": "Drop the table?", "interaction_type": "approval"}})
			in := f.pending(t, 1)
			cancel()
			if _, err := c.wait(t); !errors.Is(err, context.Canceled) {
				t.Errorf("call tool: err = %v, want context.Canceled", err)
			}
			var got *hitl.Interaction
			hitltest.WaitFor(t, "the interaction to be cancelled", func() bool {
				var err error
				got, err = f.broker.Get(context.Background(), in.ID)
				if err != nil {
					t.Fatalf("get: %v", err)
				}
				return got.Status != hitl.StatusPending
			})
			if got.Status != hitl.StatusCancelled || got.Result.Reason != "agent_cancelled" || got.Result.Channel != hitl.ChannelMCP {
				t.Errorf("interaction %s (%+v), want cancelled by the agent via mcp", got.Status, got.Result)
			}
		})
	}
}

func TestProgressNotifications(t *testing.T) {
	t.Parallel()
	for _, k := range kinds {
		if !k.short {
			continue
		}
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			s := k.connect(t, f)
			ctx := context.Background()

			// A call without a progress token gets no notifications...
			quiet := s.start(ctx, &mcp.CallToolParams{Name: tools.HumanFeedbackName, Arguments: map[string]any{"message_for_user": "Quiet?", "unique_id": "q-1"}})
			first := f.pending(t, 1)

			// ...while one with a token gets them, every interval.
			params := &mcp.CallToolParams{Name: tools.HumanFeedbackName, Arguments: map[string]any{"message_for_user": "Noisy?", "unique_id": "n-1"}}
			params.SetProgressToken("tok-1")
			noisy := s.start(ctx, params)
			second := f.pending(t, 2)
			var last float64
			for i := range 3 {
				select {
				case p := <-s.progress:
					if p.ProgressToken != "tok-1" {
						t.Fatalf("notification %d for token %v, want tok-1 only", i, p.ProgressToken)
					}
					if p.Progress <= last {
						t.Errorf("progress %v after %v, want it to increase", p.Progress, last)
					}
					if !strings.Contains(p.Message, "waiting for a person") {
						t.Errorf("message %q", p.Message)
					}
					last = p.Progress
				case <-time.After(10 * time.Second):
					t.Fatalf("got %d progress notifications, want 3", i)
				}
			}
			for _, in := range []*hitl.Interaction{first, second} {
				if _, err := f.person.Respond(ctx, in.ID, json.RawMessage(`"yes"`)); err != nil {
					t.Fatalf("respond: %v", err)
				}
			}
			for _, c := range []*call{quiet, noisy} {
				if res, err := c.wait(t); err != nil || res.IsError {
					t.Errorf("call: %v, %v; want an answer", res, err)
				}
			}
		})
	}
}

func TestSourceAgentOption(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := connectMemory(t, mcpserver.New(f.broker, &mcpserver.Options{SourceAgent: "release-bot"}))
	c := s.start(context.Background(), &mcp.CallToolParams{Name: tools.AskHumanName, Arguments: map[string]any{"question": "Ship?"}})
	in := f.pending(t, 1)
	if got, want := in.SourceAgent, "release-bot"; got != want {
		t.Errorf("source_agent = %q, want %q", got, want)
	}
	if _, err := f.person.Respond(context.Background(), in.ID, json.RawMessage(`"ok"`)); err != nil {
		t.Fatalf("respond: %v", err)
	}
	if res, err := c.wait(t); err != nil || res.IsError {
		t.Errorf("call: %v, %v", res, err)
	}
}

func TestUnreachableServer(t *testing.T) {
	t.Parallel()
	closed := httptest.NewServer(http.NotFoundHandler())
	url := closed.URL
	closed.Close()
	s := connectMemory(t, mcpserver.New(client.New(url, &client.Options{Channel: hitl.ChannelMCP}), nil))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tools.HumanFeedbackName, Arguments: map[string]any{"message_for_user": "Code?", "unique_id": "x"}})
	if err != nil {
		t.Fatalf("call tool: protocol error %v, want a tool error", err)
	}
	if got := text(t, res); !res.IsError || !strings.Contains(got, "cannot reach the hitl server") || !strings.Contains(got, "hitl serve") {
		t.Errorf("result %q (isError %v), want an unreachable tool error saying how to start the server", got, res.IsError)
	}
}

// TestLongClientName checks that a client's name longer than source_agent
// may be is shortened, not made a reason to refuse its questions.
func TestLongClientName(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := mcpserver.New(f.broker, nil).Connect(context.Background(), st)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	t.Cleanup(func() { ss.Close() })
	name := strings.Repeat("agent-", 40) + "é" // 241 bytes, é across byte 200
	name = name[:199] + "é" + name[199:]
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	s := &session{ClientSession: cs}
	c := s.start(context.Background(), &mcp.CallToolParams{Name: tools.AskHumanName, Arguments: map[string]any{"question": "Ship?"}})
	in := f.pending(t, 1)
	if want := name[:199]; in.SourceAgent != want {
		t.Errorf("source_agent = %q (%d bytes), want the first 199 bytes", in.SourceAgent, len(in.SourceAgent))
	}
	if _, err := f.person.Respond(context.Background(), in.ID, json.RawMessage(`"ok"`)); err != nil {
		t.Fatalf("respond: %v", err)
	}
	if res, err := c.wait(t); err != nil || res.IsError {
		t.Errorf("call: %v, %v; want an answer", res, err)
	}
}
