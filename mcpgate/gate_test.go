package mcpgate_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/mcpgate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// upstream is an MCP server (the official Go SDK's) behind the gate: a
// read-only tool, a tool that says nothing about itself (write), one its
// server calls destructive (remove), and two that elicit (a form, a URL).
type upstream struct {
	server *mcp.Server
	writes atomic.Int32
	last   atomic.Value // the last write's text
	// receipt is the last write's _meta["hitl/receipt"], or "".
	receipt atomic.Value
}

func newUpstream() *upstream {
	u := &upstream{server: mcp.NewServer(&mcp.Implementation{Name: "test-upstream", Version: "1.0"}, nil)}
	obj := map[string]any{"type": "object"}
	u.server.AddTool(&mcp.Tool{Name: "read", Description: "Reads a thing.", InputSchema: obj, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("read ok"), nil
		})
	u.server.AddTool(&mcp.Tool{Name: "write", Description: "Writes a thing.", InputSchema: obj},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &a)
			u.writes.Add(1)
			u.last.Store(a.Text)
			r, _ := req.Params.Meta[mcpgate.MetaReceipt].(string)
			u.receipt.Store(r)
			return text("wrote " + a.Text), nil
		})
	yes := true
	u.server.AddTool(&mcp.Tool{Name: "remove", Description: "Removes a thing.", InputSchema: obj, Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("removed"), nil
		})
	u.server.AddTool(&mcp.Tool{Name: "ask", InputSchema: obj, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
				Message: "Which environment?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
					"env": map[string]any{"type": "string", "enum": []string{"staging", "production"}},
				}, "required": []string{"env"}},
			})
			if err != nil {
				return nil, err
			}
			b, _ := json.Marshal(res)
			return text(string(b)), nil
		})
	u.server.AddTool(&mcp.Tool{Name: "open", InputSchema: obj, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "url", Message: "Authorize the app", URL: "https://auth.example.com/authorize?x=1", ElicitationID: "e1"})
			if err != nil {
				return nil, err
			}
			b, _ := json.Marshal(res)
			return text(string(b)), nil
		})
	// ask_mrtr elicits the 2026-07-28 way: an input_required result, then
	// the answer in the call again.
	u.server.AddTool(&mcp.Tool{Name: "ask_mrtr", InputSchema: obj, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if r, ok := req.Params.InputResponses["env"]; ok {
				b, _ := json.Marshal(r)
				return text(string(b) + " state=" + req.Params.RequestState), nil
			}
			return &mcp.CallToolResult{RequestState: "round-1", InputRequests: mcp.InputRequestMap{"env": &mcp.ElicitParams{
				Message: "Which environment?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
					"env": map[string]any{"type": "string", "enum": []string{"staging", "production"}},
				}, "required": []string{"env"}},
			}}}, nil
		})
	return u
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// connectThrough connects an MCP client (the Go SDK's, speaking version)
// to u through a gate over svc.
func connectThrough(t *testing.T, u *upstream, svc hitl.Service, opts *mcpgate.Options, copts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	upClient, upServer := mcp.NewInMemoryTransports()
	ss, err := u.server.Connect(ctx, upServer, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	upConn, err := upClient.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	agentSide, gateSide := mcp.NewInMemoryTransports()
	downConn, err := gateSide.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	g, err := mcpgate.New(svc, opts)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() { defer close(served); g.Serve(ctx, downConn, upConn) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "go-agent", Version: "1.0"}, copts).Connect(ctx, agentSide, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect through the gate: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		select {
		case <-served:
		case <-time.After(10 * time.Second):
			t.Error("the gate did not end when its client went away")
		}
	})
	return cs
}

// call runs a tool call in the background.
func call(cs *mcp.ClientSession, ctx context.Context, name string, args any) chan *mcp.CallToolResult {
	ch := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "protocol error: " + err.Error()}}}
		}
		ch <- res
	}()
	return ch
}

func wait(t *testing.T, ch chan *mcp.CallToolResult) (string, bool) {
	t.Helper()
	select {
	case r := <-ch:
		var b strings.Builder
		for _, c := range r.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String(), r.IsError
	case <-time.After(30 * time.Second):
		t.Fatal("tool call still running after 30s")
		return "", false
	}
}

// pending waits for the one pending interaction of svc and returns it.
func pending(t *testing.T, svc hitl.Service) *hitl.Interaction {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		list, _, err := svc.List(context.Background(), hitl.ListFilter{Status: hitl.StatusPending})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) == 1 {
			return list[0]
		}
		select {
		case <-deadline:
			t.Fatalf("%d pending interactions after 20s, want 1", len(list))
		case <-time.After(10 * time.Millisecond): // polling the store; the test has no event to wait on
		}
	}
}

func answer(t *testing.T, svc hitl.Service, id, value string) {
	t.Helper()
	if _, err := svc.Respond(context.Background(), id, json.RawMessage(value)); err != nil {
		t.Fatalf("respond %s: %v", value, err)
	}
}

const legacy = "2025-11-25" // elicitation/create requests, as the TypeScript SDK speaks

// stores are the databases the gate's questions are tested on.
var stores = []struct {
	name string
	db   func(testing.TB) hitltest.DB
}{{"sqlite", hitltest.SQLiteDB}, {"postgres", hitltest.PostgresDB}}

func TestGateReviewsCalls(t *testing.T) {
	t.Parallel()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			testGateReviewsCalls(t, hitltest.OpenEngine(t, st.db(t), nil).Broker)
		})
	}
}

// TestGateMarksDestructiveToolsRisky: the annotations of a gated tool
// reach its action's metadata, so a tool its server calls destructive is
// marked risky for the reviewer (and a tool that says nothing is not).
func TestGateMarksDestructiveToolsRisky(t *testing.T) {
	svc := hitltest.OpenEngine(t, hitltest.SQLiteDB(t), nil).Broker
	u := newUpstream()
	cs := connectThrough(t, u, svc, nil, nil, "")
	ctx := context.Background()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool  string
		risky bool
	}{{"remove", true}, {"write", false}} {
		res := call(cs, ctx, c.tool, map[string]any{"text": "x"})
		in := pending(t, svc)
		ann, _ := in.Metadata["annotations"].(map[string]any)
		if d, _ := ann["destructiveHint"].(bool); d != c.risky {
			t.Errorf("%s: metadata annotations %v; want destructiveHint %v", c.tool, in.Metadata["annotations"], c.risky)
		}
		var why []string
		for _, r := range in.Action.Risks {
			why = append(why, r.Why)
		}
		if marked := slices.Contains(why, "the tool's server marks it destructive"); marked != c.risky {
			t.Errorf("%s: risks %q; want the destructive mark: %v", c.tool, why, c.risky)
		}
		answer(t, svc, in.ID, `"approve"`)
		if _, isErr := wait(t, res); isErr {
			t.Errorf("%s: approved call returned an error", c.tool)
		}
	}
}

// TestGateAcrossReplicas: a gate asks through one replica and a person
// answers on another, sharing one PostgreSQL database; the approval
// reaches the gate and the call runs.
func TestGateAcrossReplicas(t *testing.T) {
	db := hitltest.PostgresDB(t)
	one, other := hitltest.OpenEngine(t, db, nil).Broker, hitltest.OpenEngine(t, db, nil).Broker
	u := newUpstream()
	cs := connectThrough(t, u, one, nil, nil, legacy)
	ch := call(cs, context.Background(), "write", map[string]any{"text": "replicated"})
	answer(t, other, pending(t, other).ID, `{"decision": "approve"}`)
	if got, isErr := wait(t, ch); isErr || got != "wrote replicated" {
		t.Fatalf("write approved on another replica = %q (error %v), want it run", got, isErr)
	}
}

// TestGatePassesReceipt: the gate gives the upstream server the
// approval's receipt in the forwarded call's _meta, and it verifies for
// the arguments the upstream ran (the edited ones) and no others.
func TestGatePassesReceipt(t *testing.T) {
	t.Parallel()
	srv := hitltest.Start(t, nil)
	u := newUpstream()
	cs := connectThrough(t, u, srv.Broker, nil, nil, legacy)
	ch := call(cs, context.Background(), "write", map[string]any{"text": "proposed"})
	in := pending(t, srv.Broker)
	answer(t, srv.Broker, in.ID, `{"decision": "edit", "args": {"text": "edited"}}`)
	if got, isErr := wait(t, ch); isErr || got != "wrote edited" {
		t.Fatalf("edited write = %q (error %v), want it run", got, isErr)
	}
	receipt, _ := u.receipt.Load().(string)
	if receipt == "" {
		t.Fatal("the upstream got no receipt in _meta")
	}
	c := client.New(srv.URL, nil)
	ctx := context.Background()
	if _, err := c.VerifyReceipt(ctx, receipt, hitl.ReceiptExpectation{InteractionID: in.ID, Name: "mcp__test-upstream__write", Args: json.RawMessage(`{"text":"edited"}`)}); err != nil {
		t.Errorf("the forwarded receipt, for the call run: %v", err)
	}
	if _, err := c.VerifyReceipt(ctx, receipt, hitl.ReceiptExpectation{Args: json.RawMessage(`{"text":"proposed"}`)}); err == nil {
		t.Error("the forwarded receipt verifies for the proposed args; want other args")
	}
}

func testGateReviewsCalls(t *testing.T, b hitl.Service) {
	u := newUpstream()
	cs := connectThrough(t, u, b, nil, nil, legacy)
	ctx := context.Background()

	if got, isErr := wait(t, call(cs, ctx, "read", nil)); isErr || got != "read ok" {
		t.Fatalf("read = %q (error %v), want it to pass", got, isErr)
	}
	if list, _, _ := b.List(ctx, hitl.ListFilter{}); len(list) != 0 {
		t.Fatalf("a read-only call made %d interactions, want none", len(list))
	}

	ch := call(cs, ctx, "write", map[string]any{"text": "one"})
	in := pending(t, b)
	if in.Action.Name != "mcp__test-upstream__write" || in.Action.Description != "Writes a thing." || in.SourceAgent != "go-agent" {
		t.Errorf("action %q, description %q, agent %q; want mcp__test-upstream__write, the tool's description, the client's name", in.Action.Name, in.Action.Description, in.SourceAgent)
	}
	if u.writes.Load() != 0 {
		t.Fatal("the call reached the upstream before anyone approved it")
	}
	answer(t, b, in.ID, `{"decision": "edit", "args": {"text": "edited"}}`)
	if got, isErr := wait(t, ch); isErr || got != "wrote edited" {
		t.Fatalf("edited write = %q (error %v), want the person's args forwarded", got, isErr)
	}

	ch = call(cs, ctx, "write", map[string]any{"text": "two"})
	in = pending(t, b)
	answer(t, b, in.ID, `{"decision": "reject", "message": "not today"}`)
	got, isErr := wait(t, ch)
	if !isErr || !strings.Contains(got, "not today") {
		t.Fatalf("rejected write = %q (error %v), want an error result with the reason", got, isErr)
	}
	if n := u.writes.Load(); n != 1 {
		t.Fatalf("upstream ran write %d times, want 1 (the edited call only)", n)
	}
}

func TestGateFailsClosed(t *testing.T) {
	t.Run("hitl unreachable", func(t *testing.T) {
		u := newUpstream()
		down := client.New("http://127.0.0.1:1", nil)
		cs := connectThrough(t, u, down, nil, nil, legacy)
		got, isErr := wait(t, call(cs, context.Background(), "write", map[string]any{"text": "x"}))
		if !isErr || !strings.Contains(got, "cannot reach the hitl server") || u.writes.Load() != 0 {
			t.Fatalf("write with hitl down = %q (error %v), %d writes; want an error result and no write", got, isErr, u.writes.Load())
		}
	})
	t.Run("nobody answers", func(t *testing.T) {
		b := hitltest.StartBroker(t)
		u := newUpstream()
		cs := connectThrough(t, u, b, &mcpgate.Options{Timeout: time.Second}, nil, legacy)
		got, isErr := wait(t, call(cs, context.Background(), "write", map[string]any{"text": "x"}))
		if !isErr || !strings.Contains(got, "nobody answered") || u.writes.Load() != 0 {
			t.Fatalf("expired write = %q (error %v), %d writes; want an error result and no write", got, isErr, u.writes.Load())
		}
	})
	t.Run("client gives up", func(t *testing.T) {
		b := hitltest.StartBroker(t)
		u := newUpstream()
		cs := connectThrough(t, u, b, nil, nil, legacy)
		ctx, cancel := context.WithCancel(context.Background())
		ch := call(cs, ctx, "write", map[string]any{"text": "x"})
		in := pending(t, b)
		cancel()
		wait(t, ch)
		got, err := b.Wait(context.Background(), in.ID)
		if err != nil || got.Status != hitl.StatusCancelled {
			t.Fatalf("after the client cancelled, the question is %v (%v), want cancelled", got.Status, err)
		}
		if u.writes.Load() != 0 {
			t.Fatal("a call the client cancelled reached the upstream")
		}
	})
}

func TestGatePolicy(t *testing.T) {
	yes, no := true, false
	cases := []struct {
		policy mcpgate.Policy
		tool   string
		a      *mcpgate.Annotations
		want   bool
	}{
		{mcpgate.Policy{}, "read_file", &mcpgate.Annotations{ReadOnlyHint: true}, false},
		{mcpgate.Policy{}, "write_file", nil, true},
		{mcpgate.Policy{}, "write_file", &mcpgate.Annotations{}, true},
		{mcpgate.Policy{}, "write_file", &mcpgate.Annotations{DestructiveHint: &no}, true},
		{mcpgate.Policy{}, "odd", &mcpgate.Annotations{ReadOnlyHint: true, DestructiveHint: &yes}, true},
		{mcpgate.Policy{Pass: []string{"list_*"}}, "list_dirs", nil, false},
		{mcpgate.Policy{Review: []string{"read_*"}}, "read_file", &mcpgate.Annotations{ReadOnlyHint: true}, true},
		{mcpgate.Policy{Review: []string{"*"}, Pass: []string{"*"}}, "x", nil, true},
	}
	for _, c := range cases {
		if got, why := c.policy.Gated(c.tool, c.a); got != c.want {
			t.Errorf("%+v gates %s (%+v) = %v (%s), want %v", c.policy, c.tool, c.a, got, why, c.want)
		}
	}
	if err := (&mcpgate.Policy{Review: []string{"[x"}}).Check(); err == nil {
		t.Error("a malformed glob passed Check")
	}
}

func TestGateElicitsInHitl(t *testing.T) {
	b := hitltest.StartBroker(t)
	u := newUpstream()
	// A client without elicitation: the gate asks hitl's people instead.
	cs := connectThrough(t, u, b, nil, nil, legacy)
	ctx := context.Background()

	ch := call(cs, ctx, "ask", nil)
	in := pending(t, b)
	if in.Type != hitl.TypeForm || in.Question != "Which environment?" {
		t.Fatalf("elicitation asked as %s %q, want a form with the server's message", in.Type, in.Question)
	}
	answer(t, b, in.ID, `{"env": "staging"}`)
	if got, _ := wait(t, ch); got != `{"action":"accept","content":{"env":"staging"}}` {
		t.Fatalf("upstream got %s, want accept with the person's values", got)
	}

	ch = call(cs, ctx, "open", nil)
	in = pending(t, b)
	if in.Type != hitl.TypeSingleChoice || !strings.Contains(in.Context, "https://auth.example.com/authorize?x=1") {
		t.Fatalf("URL elicitation asked as %s with context %q, want a choice carrying the URL", in.Type, in.Context)
	}
	answer(t, b, in.ID, `"decline"`)
	if got, _ := wait(t, ch); got != `{"action":"decline"}` {
		t.Fatalf("upstream got %s, want decline", got)
	}
}

func TestGateElicitationExpires(t *testing.T) {
	b := hitltest.StartBroker(t)
	cs := connectThrough(t, newUpstream(), b, &mcpgate.Options{Elicit: mcpgate.ElicitHitl, ElicitTimeout: time.Second}, nil, legacy)
	if got, _ := wait(t, call(cs, context.Background(), "ask", nil)); got != `{"action":"cancel"}` {
		t.Fatalf("upstream got %s, want cancel when nobody answers", got)
	}
}

func TestGateElicitModes(t *testing.T) {
	for _, c := range []struct {
		mode     mcpgate.ElicitMode
		wantHitl bool
	}{
		{mcpgate.ElicitClient, false},
		{mcpgate.ElicitClientElseHitl, false},
		{mcpgate.ElicitHitl, true},
	} {
		t.Run(string(c.mode), func(t *testing.T) {
			b := hitltest.StartBroker(t)
			asked := make(chan struct{}, 1)
			copts := &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked <- struct{}{}
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"env": "production"}}, nil
			}}
			cs := connectThrough(t, newUpstream(), b, &mcpgate.Options{Elicit: c.mode}, copts, legacy)
			ch := call(cs, context.Background(), "ask", nil)
			want := `{"action":"accept","content":{"env":"production"}}`
			if c.wantHitl {
				answer(t, b, pending(t, b).ID, `{"env": "staging"}`)
				want = `{"action":"accept","content":{"env":"staging"}}`
			}
			if got, _ := wait(t, ch); got != want {
				t.Fatalf("upstream got %s, want %s", got, want)
			}
			if got := len(asked) == 1; got == c.wantHitl {
				t.Fatalf("client asked: %v, want %v", got, !c.wantHitl)
			}
		})
	}
}

// TestGateRules: a person's "always allow" on a gated call, with an
// argument pattern, decides the next calls of that server's tool whose
// argument matches, without asking; others still wait for a person.
func TestGateRules(t *testing.T) {
	b := hitltest.StartBroker(t)
	u := newUpstream()
	cs := connectThrough(t, u, b, nil, nil, legacy)
	ctx := context.Background()

	ch := call(cs, ctx, "write", map[string]any{"text": "notes/a.md"})
	answer(t, b, pending(t, b).ID, `{"decision": "approve", "always": {"match": {"arg": "text", "glob": "notes/**"}}}`)
	wait(t, ch)
	if got, isErr := wait(t, call(cs, ctx, "write", map[string]any{"text": "notes/b.md"})); isErr || got != "wrote notes/b.md" {
		t.Fatalf("write under the rule = %q (error %v), want it allowed without asking", got, isErr)
	}
	ch = call(cs, ctx, "write", map[string]any{"text": "src/main.go"})
	in := pending(t, b)
	if in.Action.Name != "mcp__test-upstream__write" {
		t.Fatalf("pending %q, want the write outside the rule's pattern", in.Action.Name)
	}
	answer(t, b, in.ID, `{"decision": "reject"}`)
	wait(t, ch)
	if n := u.writes.Load(); n != 2 {
		t.Fatalf("upstream ran write %d times, want 2", n)
	}
}

// TestGateElicitsMultiRoundTrip: on protocol 2026-07-28 an upstream asks
// for input in an input_required result; for a client that cannot
// elicit, the gate asks in hitl, calls again with the answer and the
// request state, and the client sees only the final result.
func TestGateElicitsMultiRoundTrip(t *testing.T) {
	b := hitltest.StartBroker(t)
	cs := connectThrough(t, newUpstream(), b, nil, nil, "2026-07-28")
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s, want 2026-07-28", v)
	}
	ch := call(cs, context.Background(), "ask_mrtr", nil)
	in := pending(t, b)
	if in.Type != hitl.TypeForm || in.Question != "Which environment?" {
		t.Fatalf("asked %s %q, want the form", in.Type, in.Question)
	}
	answer(t, b, in.ID, `{"env": "production"}`)
	if got, isErr := wait(t, ch); isErr || got != `{"action":"accept","content":{"env":"production"}} state=round-1` {
		t.Fatalf("result %q (error %v), want the person's answer and the request state at the upstream", got, isErr)
	}
}
