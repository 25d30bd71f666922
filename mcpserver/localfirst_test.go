package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectLocalFirst connects a client that answers elicitations with
// answer (which may block) to a local-first server over f's engine.
func connectLocalFirst(t *testing.T, f *fixture, answer func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) *mcp.ClientSession {
	t.Helper()
	srv := mcpserver.New(f.broker, &mcpserver.Options{LocalFirst: true})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: clientName, Version: "1"}, &mcp.ClientOptions{ElicitationHandler: answer}).
		Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func textOf(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestLocalFirstClientAnswers: the person at the client answers first;
// the model reads their answer and the question in hitl ends, cancelled
// with the reason.
func TestLocalFirstClientAnswers(t *testing.T) {
	f := newFixture(t)
	cs := connectLocalFirst(t, f, func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		if req.Params.Message != "Deploy to production?" {
			t.Errorf("elicited %q, want the question", req.Params.Message)
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
	})
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask_human", Arguments: map[string]any{
		"question": "Deploy to production?", "interaction_type": "approval"}})
	if err != nil || res.IsError || !strings.Contains(textOf(res), "Approved") || !strings.Contains(textOf(res), mcpserver.LocalAnswerer) {
		t.Fatalf("result %q (error %v, %v), want the client's approval", textOf(res), res.IsError, err)
	}
	list, _, err := f.broker.List(context.Background(), hitl.ListFilter{})
	if err != nil || len(list) != 1 || list[0].Status != hitl.StatusCancelled || !strings.Contains(list[0].Result.Reason, "answered at the MCP client") {
		t.Fatalf("questions in hitl %+v (%v), want one, cancelled as answered at the client", list, err)
	}
}

// TestLocalFirstHitlAnswers: a person in hitl answers first; the model
// reads their answer, and the elicitation at the client is cancelled.
func TestLocalFirstHitlAnswers(t *testing.T) {
	f := newFixture(t)
	cancelled := make(chan struct{})
	cs := connectLocalFirst(t, f, func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		<-ctx.Done()
		close(cancelled)
		return nil, ctx.Err()
	})
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "human_feedback", Arguments: map[string]any{
			"message_for_user": "What is the code?", "unique_id": "lf-1"}})
		if err != nil {
			res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
		}
		done <- res
	}()
	var in *hitl.Interaction
	deadline := time.After(20 * time.Second)
	for in == nil {
		list, _, _ := f.broker.List(context.Background(), hitl.ListFilter{Status: hitl.StatusPending})
		if len(list) == 1 {
			in = list[0]
			break
		}
		select {
		case <-deadline:
			t.Fatal("no question in hitl")
		case <-time.After(10 * time.Millisecond): // polling the store
		}
	}
	if _, err := f.person.Respond(context.Background(), in.ID, json.RawMessage(`"424242"`)); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-done:
		if res.IsError || textOf(res) != "424242" {
			t.Fatalf("result %q (error %v), want hitl's answer", textOf(res), res.IsError)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call did not end")
	}
	select {
	case <-cancelled:
	case <-time.After(20 * time.Second):
		t.Fatal("the elicitation at the client was not cancelled")
	}
}
