package main

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/refused"
	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/tools"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpSession runs "hitl mcp" with args (and extra environment variables)
// as an MCP client would, connected over its stdin and stdout.
type mcpSession struct {
	*mcp.ClientSession
	progress chan *mcp.ProgressNotificationParams
}

func startMCP(t *testing.T, env []string, args ...string) *mcpSession {
	t.Helper()
	cmd := exec.Command(hitlBin, append([]string{"mcp"}, args...)...)
	cmd.Env = append(cleanEnv(), env...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	s := &mcpSession{progress: make(chan *mcp.ProgressNotificationParams, 1000)}
	c := mcp.NewClient(&mcp.Implementation{Name: "stdio-agent", Version: "1.0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			select {
			case s.progress <- req.Params:
			default:
			}
		},
	})
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to hitl mcp: %v\nstderr:\n%s", err, stderr)
	}
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			t.Logf("hitl mcp stderr:\n%s", stderr)
		}
	})
	s.ClientSession = cs
	return s
}

// toolCall is a tool call running in the background.
type toolCall struct {
	done chan struct{}
	res  *mcp.CallToolResult
	err  error
}

func (s *mcpSession) start(ctx context.Context, params *mcp.CallToolParams) *toolCall {
	c := &toolCall{done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.res, c.err = s.CallTool(ctx, params)
	}()
	return c
}

func (c *toolCall) wait(t *testing.T) (*mcp.CallToolResult, error) {
	t.Helper()
	select {
	case <-c.done:
		return c.res, c.err
	case <-time.After(60 * time.Second):
		t.Fatal("tool call still running after 60s")
		return nil, nil
	}
}

// resultText returns the text of a tool result.
func resultText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res == nil || len(res.Content) != 1 {
		t.Fatalf("result %+v: want one content item", res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	return tc.Text
}

func TestMCPStdioAnswered(t *testing.T) {
	turns.Parallel(t)
	srv := startServer(t)
	c := srv.client(t)
	// The server comes from HITL_URL, as in an MCP client's config.
	s := startMCP(t, []string{"HITL_URL=" + srv.URL}, "--progress-interval", "20ms")
	ctx := context.Background()

	params := &mcp.CallToolParams{Name: tools.HumanFeedbackName, Arguments: map[string]any{
		"message_for_user": "Enter the 6-digit code sent to your email",
		"unique_id":        "otp-1",
	}}
	params.SetProgressToken(7)
	call := s.start(ctx, params)
	in := pendingByKey(t, c, "otp-1")
	if in.CreatedVia != hitl.ChannelMCP || in.SourceAgent != "stdio-agent" {
		t.Errorf("created via %q by agent %q, want mcp and stdio-agent", in.CreatedVia, in.SourceAgent)
	}
	// It blocks, reporting progress, until someone answers.
	for i := range 2 {
		select {
		case p := <-s.progress:
			if tok, _ := p.ProgressToken.(float64); tok != 7 {
				t.Errorf("progress token %v, want 7", p.ProgressToken)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("got %d progress notifications, want 2", i)
		}
	}
	select {
	case <-call.done:
		t.Fatalf("the tool call returned before anyone answered: %v, %v", call.res, call.err)
	default:
	}
	if _, err := c.Respond(ctx, in.ID, json.RawMessage(`"582491"`)); err != nil {
		t.Fatalf("respond: %v", err)
	}
	res, err := call.wait(t)
	if err != nil {
		t.Fatalf("call tool: %v", err)
	}
	if res.IsError || resultText(t, res) != "582491" {
		t.Errorf("result %q (isError %v), want the code", resultText(t, res), res.IsError)
	}

	// ask_human returns structured content too.
	call = s.start(ctx, &mcp.CallToolParams{Name: tools.AskHumanName, Arguments: map[string]any{
		"question": "Deploy build 1432?", "interaction_type": "approval",
	}})
	var pending []*hitl.Interaction
	waitFor(t, "the approval to be pending", func() bool {
		pending, _, err = c.List(ctx, hitl.ListFilter{Status: hitl.StatusPending})
		return err == nil && len(pending) == 1
	})
	if _, err := c.Respond(ctx, pending[0].ID, json.RawMessage(`"approve"`)); err != nil {
		t.Fatalf("respond: %v", err)
	}
	res, err = call.wait(t)
	if err != nil || res.IsError {
		t.Fatalf("call tool: %v, %v", res, err)
	}
	out, _ := res.StructuredContent.(map[string]any)
	if out["status"] != "answered" || out["value"] != true {
		t.Errorf("structured content %v, want answered true", res.StructuredContent)
	}
}

func TestMCPStdioToolErrors(t *testing.T) {
	turns.Parallel(t)
	srv := startServer(t)
	c := srv.client(t)
	s := startMCP(t, nil, "--server", srv.URL)
	ctx := context.Background()

	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tools.AskHumanName, Arguments: map[string]any{"question": "Anyone?", "timeout": 1}})
	if err != nil {
		t.Fatalf("timeout: protocol error %v", err)
	}
	if !res.IsError || !strings.HasPrefix(resultText(t, res), "timeout waiting for feedback") {
		t.Errorf("timeout: %q (isError %v), want a timeout tool error", resultText(t, res), res.IsError)
	}

	res, err = s.CallTool(ctx, &mcp.CallToolParams{Name: tools.HumanFeedbackName, Arguments: map[string]any{"message_for_user": "No id"}})
	if err != nil || !res.IsError || !strings.Contains(resultText(t, res), "unique_id is required") {
		t.Errorf("invalid: %v, %v; want an invalid-request tool error", res, err)
	}

	// Cancelling the MCP request cancels the interaction on the server.
	cctx, cancel := context.WithCancel(ctx)
	call := s.start(cctx, &mcp.CallToolParams{Name: tools.HumanFeedbackName, Arguments: map[string]any{"message_for_user": "Drop the table?", "unique_id": "drop-1"}})
	in := pendingByKey(t, c, "drop-1")
	cancel()
	if _, err := call.wait(t); !errors.Is(err, context.Canceled) {
		t.Errorf("call tool: err = %v, want context.Canceled", err)
	}
	var got *hitl.Interaction
	waitFor(t, "the interaction to be cancelled", func() bool {
		got, err = c.Get(ctx, in.ID)
		return err == nil && got.Status != hitl.StatusPending
	})
	if got.Status != hitl.StatusCancelled || got.Result.Channel != hitl.ChannelMCP {
		t.Errorf("interaction %s (%+v), want cancelled via mcp", got.Status, got.Result)
	}
}

func TestMCPStdioServerUnreachable(t *testing.T) {
	turns.Parallel(t)
	url := refused.URL(t)
	s := startMCP(t, nil, "--server", url)
	ctx, cancel := context.WithTimeout(context.Background(), mcpDialTimeout+5*time.Second)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tools.HumanFeedbackName, Arguments: map[string]any{"message_for_user": "Code?", "unique_id": "x"}})
	if err != nil {
		t.Fatalf("call tool: %v, want a tool error at once", err)
	}
	text := resultText(t, res)
	if !res.IsError || !strings.Contains(text, url) || !strings.Contains(text, "hitl serve") {
		t.Errorf("result %q (isError %v), want an error naming %s and how to start the server", text, res.IsError, url)
	}
}

func TestMCPFlags(t *testing.T) {
	turns.Parallel(t)
	for _, args := range [][]string{{"mcp", "extra"}, {"mcp", "--progress-interval", "0s"}, {"mcp", "--log-level", "loud"}, {"mcp", "--bogus"}} {
		if _, stderr, code := hitlRun(t, args...); code != 2 {
			t.Errorf("hitl %s: exit %d, want 2; stderr:\n%s", strings.Join(args, " "), code, stderr)
		}
	}
	stdout, _, code := hitlRun(t, "help", "mcp")
	if code != 0 || !strings.Contains(stdout, "hitl mcp") || !strings.Contains(stdout, "-server URL") {
		t.Errorf("help mcp: exit %d, output:\n%s", code, stdout)
	}
}
