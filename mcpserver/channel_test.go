package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/refused"
	"github.com/hitl-sh/hitl/mcpserver"
	"github.com/hitl-sh/hitl/tools"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The permission relay, with a raw JSON-RPC peer that plays Claude Code's
// side as 2.1.332 does (internal/claudetest confirms it against the real
// CLI): it initializes with 2025-11-25 declaring nothing special, sends
// notifications/claude/channel/permission_request, and reads
// notifications/claude/channel/permission.

// claudeSide is Claude Code's end of a channel connection.
type claudeSide struct {
	t    *testing.T
	conn mcp.Connection
	msgs chan jsonrpc.Message
	init map[string]any // the initialize result
	done chan error     // Run's return, with channelRun
}

// channelRun serves srv over an in-memory transport with Run (which
// returns once its questions are withdrawn) and initializes as Claude Code.
func channelRun(t *testing.T, srv *mcpserver.Server) *claudeSide {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	c := &claudeSide{t: t, msgs: make(chan jsonrpc.Message, 100), done: make(chan error, 1)}
	go func() { c.done <- srv.Run(context.Background(), st) }()
	conn, err := ct.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c.conn = conn
	t.Cleanup(func() { conn.Close() })
	go func() {
		for {
			msg, err := conn.Read(context.Background())
			if err != nil {
				close(c.msgs)
				return
			}
			c.msgs <- msg
		}
	}()
	id, _ := jsonrpc.MakeID(float64(0))
	c.write(&jsonrpc.Request{ID: id, Method: "initialize", Params: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true},"elicitation":{"form":{},"url":{}}},"clientInfo":{"name":"claude-code","version":"2.1.332"}}`)})
	resp, ok := c.next().(*jsonrpc.Response)
	if !ok || resp.Error != nil {
		t.Fatalf("initialize: %+v", resp)
	}
	if err := json.Unmarshal(resp.Result, &c.init); err != nil {
		t.Fatal(err)
	}
	c.write(&jsonrpc.Request{Method: "notifications/initialized"})
	return c
}

func (c *claudeSide) write(msg jsonrpc.Message) {
	c.t.Helper()
	if err := c.conn.Write(context.Background(), msg); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// next returns the next message the server sent.
func (c *claudeSide) next() jsonrpc.Message {
	c.t.Helper()
	select {
	case msg, ok := <-c.msgs:
		if !ok {
			c.t.Fatal("the server closed the connection")
		}
		return msg
	case <-time.After(30 * time.Second):
		c.t.Fatal("no message from the server in 30s")
		return nil
	}
}

// request relays a permission prompt for tool, as Claude Code does.
func (c *claudeSide) request(id, tool, description, preview string) {
	c.t.Helper()
	params, _ := json.Marshal(tools.ChannelPermissionRequest{RequestID: id, ToolName: tool, Description: description, InputPreview: preview})
	c.write(&jsonrpc.Request{Method: tools.MethodChannelPermissionRequest, Params: params})
}

// answer returns the next permission answer the server sent.
func (c *claudeSide) answer() tools.ChannelPermission {
	c.t.Helper()
	for {
		req, ok := c.next().(*jsonrpc.Request)
		if !ok || req.Method != tools.MethodChannelPermission {
			continue
		}
		var p tools.ChannelPermission
		if err := json.Unmarshal(req.Params, &p); err != nil {
			c.t.Fatalf("permission params %s: %v", req.Params, err)
		}
		return p
	}
}

// hangUp closes Claude Code's end, waits for Run to return (its questions
// withdrawn), and returns every permission answer the server sent.
func (c *claudeSide) hangUp() []tools.ChannelPermission {
	c.t.Helper()
	c.conn.Close()
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		c.t.Fatal("Run did not return 30s after the client left")
	}
	var got []tools.ChannelPermission
	for msg := range c.msgs {
		if req, ok := msg.(*jsonrpc.Request); ok && req.Method == tools.MethodChannelPermission {
			var p tools.ChannelPermission
			json.Unmarshal(req.Params, &p)
			got = append(got, p)
		}
	}
	return got
}

// channelKinds are the services a channel asks through.
var channelKinds = []struct {
	name string
	svc  func(t *testing.T, f *fixture) hitl.Service
}{
	{"engine", func(t *testing.T, f *fixture) hitl.Service { return f.broker }},
	{"http-client", func(t *testing.T, f *fixture) hitl.Service {
		return hitltest.NewClient(t, f.url, &client.Options{Channel: hitl.ChannelMCP})
	}},
}

const preview = `{ "command": "echo hi > out.txt", "description": "write hi" }`

// TestChannelDecision: the person's approve is Claude Code's allow, a
// reject its deny; the question is the tool with its preview as text.
func TestChannelDecision(t *testing.T) {
	t.Parallel()
	for _, k := range channelKinds {
		for _, tc := range []struct{ answer, want string }{
			{`"approve"`, tools.ChannelAllow},
			{`{"decision":"reject","message":"not now"}`, tools.ChannelDeny},
		} {
			t.Run(k.name+"/"+tc.want, func(t *testing.T) {
				t.Parallel()
				f := newFixture(t)
				c := channelRun(t, mcpserver.New(k.svc(t, f), &mcpserver.Options{Channel: true}))
				c.request("azyuv", "Bash", "write hi", preview)
				in := f.pending(t, 1)
				if _, err := f.person.Respond(context.Background(), in.ID, json.RawMessage(tc.answer)); err != nil {
					t.Fatalf("respond: %v", err)
				}
				if got, want := c.answer(), (tools.ChannelPermission{RequestID: "azyuv", Behavior: tc.want}); got != want {
					t.Errorf("sent %+v, want %+v", got, want)
				}
				if extra := c.hangUp(); len(extra) != 0 {
					t.Errorf("also sent %+v", extra)
				}
			})
		}
	}
}

// TestChannelQuestion: what the person sees, and that an edit is not
// offered.
func TestChannelQuestion(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := channelRun(t, mcpserver.New(f.broker, &mcpserver.Options{Channel: true}))
	c.request("azyuv", "Bash", "write hi", preview)
	in := f.pending(t, 1)
	if in.Type != hitl.TypeAction || in.Action.Name != "Bash" || in.Action.Description != "write hi" {
		t.Errorf("asked %s %+v, want the action Bash", in.Type, in.Action)
	}
	var args map[string]string
	json.Unmarshal(in.Action.Args, &args)
	if d := cmp.Diff(map[string]string{"input_preview": preview}, args); d != "" {
		t.Errorf("args -want +got:\n%s", d)
	}
	if d := cmp.Diff([]hitl.Decision{hitl.DecisionApprove, hitl.DecisionReject}, in.Decisions); d != "" {
		t.Errorf("decisions -want +got:\n%s", d)
	}
	if in.SourceAgent != tools.ClaudeCodeAgent || !strings.HasSuffix(in.IdempotencyKey, ":azyuv") || in.Metadata["via"] != tools.ChannelPermissionVia {
		t.Errorf("source_agent %q, idempotency_key %q, metadata %v", in.SourceAgent, in.IdempotencyKey, in.Metadata)
	}
	if !strings.Contains(in.Context, `"command": "echo hi > out.txt"`) || !strings.Contains(in.Context, "first answer wins") {
		t.Errorf("context %q, want the preview and how the prompt is decided", in.Context)
	}
	if _, err := f.person.Respond(context.Background(), in.ID, json.RawMessage(`{"decision":"edit","args":{"input_preview":"ls"}}`)); err == nil {
		t.Error("an edit was accepted")
	}
	// The same prompt relayed twice is one question.
	c.request("azyuv", "Bash", "write hi", preview)
	c.request("AZYUV", "Bash", "write hi", preview)
	if list := pendingList(t, f); len(list) != 1 {
		t.Errorf("%d questions, want 1", len(list))
	}
}

// TestChannelCapability: only a channel declares the capabilities, and
// serves protocol versions before 2026-07-28 only (Claude Code does not
// relay over a later one).
func TestChannelCapability(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := channelRun(t, mcpserver.New(f.broker, &mcpserver.Options{Channel: true}))
	caps, _ := c.init["capabilities"].(map[string]any)
	exp, _ := caps["experimental"].(map[string]any)
	if _, ok := exp[tools.ChannelCapability]; !ok {
		t.Errorf("capabilities %v, want %s", caps, tools.ChannelCapability)
	}
	if _, ok := exp[tools.ChannelPermissionCapability]; !ok {
		t.Errorf("capabilities %v, want %s", caps, tools.ChannelPermissionCapability)
	}
	plain := channelRun(t, mcpserver.New(f.broker, nil))
	caps, _ = plain.init["capabilities"].(map[string]any)
	if _, ok := caps["experimental"]; ok {
		t.Errorf("a server that is not a channel declares %v", caps)
	}
	// A plain server ignores a permission request: no question.
	plain.request("abcde", "Bash", "", preview)
	plain.hangUp()
	if list := pendingList(t, f); len(list) != 0 {
		t.Errorf("a plain server asked %d questions", len(list))
	}
	if v := mcp.SupportedProtocolVersions()[0]; v < "2026-07-28" {
		t.Skipf("the SDK's newest version is %s", v)
	}
	ct, st := mcp.NewInMemoryTransports()
	srv := mcpserver.New(f.broker, &mcpserver.Options{Channel: true})
	go srv.Run(context.Background(), st)
	conn, err := ct.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	id, _ := jsonrpc.MakeID(float64(1))
	conn.Write(context.Background(), &jsonrpc.Request{ID: id, Method: "initialize", Params: json.RawMessage(`{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"claude-code","version":"2.1.332"}}`)})
	msg, err := conn.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if resp, ok := msg.(*jsonrpc.Response); !ok || json.Unmarshal(resp.Result, &res) != nil || res.ProtocolVersion >= "2026-07-28" || res.ProtocolVersion == "" {
		t.Errorf("initialize with 2026-07-28 negotiated %q (%+v), want an earlier version", res.ProtocolVersion, msg)
	}
}

// TestChannelFailsClosed: whenever nobody in hitl approves or rejects,
// Claude Code is sent nothing, and the terminal decides.
func TestChannelFailsClosed(t *testing.T) {
	t.Parallel()
	t.Run("expired", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		c := channelRun(t, mcpserver.New(f.broker, &mcpserver.Options{Channel: true, ChannelTimeout: time.Second}))
		c.request("abcde", "Bash", "", preview)
		in := f.pending(t, 1)
		ended := waitEnded(t, f, in.ID)
		if ended.Status != hitl.StatusExpired {
			t.Errorf("status %s, want expired", ended.Status)
		}
		if got := c.hangUp(); len(got) != 0 {
			t.Errorf("sent %+v, want nothing", got)
		}
	})
	t.Run("cancelled in hitl", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		c := channelRun(t, mcpserver.New(f.broker, &mcpserver.Options{Channel: true}))
		c.request("abcde", "Bash", "", preview)
		in := f.pending(t, 1)
		if _, err := f.broker.Cancel(context.Background(), in.ID, "withdrawn"); err != nil {
			t.Fatal(err)
		}
		waitEnded(t, f, in.ID)
		if got := c.hangUp(); len(got) != 0 {
			t.Errorf("sent %+v, want nothing", got)
		}
	})
	t.Run("hitl down", func(t *testing.T) {
		t.Parallel()
		down := client.New(refused.URL(t), nil)
		var logs lockedBuffer
		c := channelRun(t, mcpserver.New(down, &mcpserver.Options{Channel: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))}))
		c.request("abcde", "Bash", "", preview)
		hitltest.WaitFor(t, "the relay to give up", func() bool { return strings.Contains(logs.String(), "mcp channel permission request") })
		if !strings.Contains(logs.String(), "connection refused") {
			t.Errorf("logs %q, want the failure", logs.String())
		}
		if got := c.hangUp(); len(got) != 0 {
			t.Errorf("sent %+v, want nothing", got)
		}
	})
}

// TestChannelAnsweredAtTerminal: Claude Code says nothing when the person
// at the terminal answers, so the question ends when it relays its next
// prompt, and the last when the session ends; an answer in hitl after
// that sends nothing.
func TestChannelAnsweredAtTerminal(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := channelRun(t, mcpserver.New(f.broker, &mcpserver.Options{Channel: true}))
	c.request("first", "Bash", "", preview)
	first := f.pending(t, 1)
	c.request("secnd", "Write", "", `{ "file_path": "a.txt" }`)
	ended := waitEnded(t, f, first.ID)
	if ended.Status != hitl.StatusCancelled || reason(ended) != mcpserver.ReasonAnsweredElsewhere {
		t.Errorf("first question %s (%q), want cancelled: %q", ended.Status, reason(ended), mcpserver.ReasonAnsweredElsewhere)
	}
	second := f.pending(t, 1)
	if second.Action.Name != "Write" {
		t.Fatalf("pending %s, want the Write", second.Action.Name)
	}
	if got := c.hangUp(); len(got) != 0 {
		t.Errorf("sent %+v, want nothing", got)
	}
	ended = waitEnded(t, f, second.ID) // Run returned: already withdrawn
	if ended.Status != hitl.StatusCancelled || reason(ended) != mcpserver.ReasonSessionEnded {
		t.Errorf("second question %s (%q), want cancelled: %q", ended.Status, reason(ended), mcpserver.ReasonSessionEnded)
	}
}

// lockedBuffer is a buffer safe to log to and read at once.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// reason is why in was cancelled or expired.
func reason(in *hitl.Interaction) string {
	if in.Result == nil {
		return ""
	}
	return in.Result.Reason
}

// pendingList returns the pending questions.
func pendingList(t *testing.T, f *fixture) []*hitl.Interaction {
	t.Helper()
	list, _, err := f.broker.List(context.Background(), hitl.ListFilter{Status: hitl.StatusPending})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// waitEnded waits for interaction id to end and returns it.
func waitEnded(t *testing.T, f *fixture, id string) *hitl.Interaction {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in, err := f.broker.Wait(ctx, id)
	if err != nil {
		t.Fatalf("wait for %s: %v", id, err)
	}
	return in
}
