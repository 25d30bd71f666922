package mcpserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// clientName is the MCP client's implementation name, which becomes the
// interactions' source_agent.
const clientName = "test-agent"

// progressEvery is the progress interval of the servers the tests build
// themselves (hitl serve's /mcp uses the default).
const progressEvery = 10 * time.Millisecond

// fixture is a real hitl server (HTTP API and /mcp) over a SQLite file,
// and a person who answers over HTTP from the web inbox.
type fixture struct {
	broker *broker.Broker
	url    string
	person *client.Client
}

// newFixture starts a fixture over a new SQLite file.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	ts := hitltest.Start(t, nil)
	return &fixture{broker: ts.Broker, url: ts.URL, person: hitltest.NewClient(t, ts.URL, &client.Options{Channel: hitl.ChannelWeb})}
}

// session is a connected MCP client and the progress notifications it
// received.
type session struct {
	*mcp.ClientSession
	progress chan *mcp.ProgressNotificationParams
}

// connect connects an MCP client named clientName over t.
func connect(t *testing.T, tr mcp.Transport, opts *mcp.ClientSessionOptions) *session {
	t.Helper()
	s := &session{progress: make(chan *mcp.ProgressNotificationParams, 1000)}
	c := mcp.NewClient(&mcp.Implementation{Name: clientName, Version: "1.0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			select {
			case s.progress <- req.Params:
			default:
			}
		},
	})
	cs, err := c.Connect(context.Background(), tr, opts)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	s.ClientSession = cs
	return s
}

// kind is one way to reach hitl's MCP tools.
type kind struct {
	name string
	// short reports whether progress comes every progressEvery (false for
	// hitl serve's own /mcp, which uses the default interval).
	short   bool
	connect func(t *testing.T, f *fixture) *session
}

// kinds lists every transport and engine combination the tests run on.
var kinds = []kind{
	{"memory/engine", true, func(t *testing.T, f *fixture) *session {
		return connectMemory(t, mcpserver.New(f.broker, &mcpserver.Options{ProgressInterval: progressEvery}))
	}},
	{"memory/http-client", true, func(t *testing.T, f *fixture) *session {
		remote := hitltest.NewClient(t, f.url, &client.Options{Channel: hitl.ChannelMCP})
		return connectMemory(t, mcpserver.New(remote, &mcpserver.Options{ProgressInterval: progressEvery}))
	}},
	{"streamable/hitl-serve", false, func(t *testing.T, f *fixture) *session {
		return connectHTTP(t, f.url+"/mcp", "")
	}},
	{"streamable/hitl-serve/2025-06-18", false, func(t *testing.T, f *fixture) *session {
		return connectHTTP(t, f.url+"/mcp", "2025-06-18")
	}},
	{"streamable/short-progress", true, func(t *testing.T, f *fixture) *session {
		return connectHTTP(t, serveMCP(t, f.broker), "")
	}},
	{"streamable/short-progress/2025-06-18", true, func(t *testing.T, f *fixture) *session {
		return connectHTTP(t, serveMCP(t, f.broker), "2025-06-18")
	}},
}

// connectMemory serves srv over an in-memory transport and connects to it.
func connectMemory(t *testing.T, srv *mcpserver.Server) *session {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	t.Cleanup(func() { ss.Close() })
	return connect(t, ct, nil)
}

// serveMCP serves an MCP server over b with a short progress interval on
// its own HTTP server, and returns its URL.
func serveMCP(t *testing.T, b *broker.Broker) string {
	t.Helper()
	ts := httptest.NewServer(mcpserver.New(b, &mcpserver.Options{ProgressInterval: progressEvery}).Handler())
	t.Cleanup(ts.Close)
	return ts.URL
}

// connectHTTP connects over streamable HTTP, with the SDK's newest
// protocol version when version is "".
func connectHTTP(t *testing.T, url, version string) *session {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	return connect(t, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, opts)
}

// call is a tool call running in the background.
type call struct {
	done chan struct{}
	res  *mcp.CallToolResult
	err  error
}

// start calls a tool in a goroutine.
func (s *session) start(ctx context.Context, params *mcp.CallToolParams) *call {
	c := &call{done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.res, c.err = s.CallTool(ctx, params)
	}()
	return c
}

// wait returns the call's result, failing the test after a bound.
func (c *call) wait(t *testing.T) (*mcp.CallToolResult, error) {
	t.Helper()
	select {
	case <-c.done:
		return c.res, c.err
	case <-time.After(30 * time.Second):
		t.Fatal("tool call still running after 30s")
		return nil, nil
	}
}

// running reports whether the call has not returned yet.
func (c *call) running() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// pending waits for n pending interactions with a waiting agent and
// returns the newest.
func (f *fixture) pending(t *testing.T, n int) *hitl.Interaction {
	t.Helper()
	var list []*hitl.Interaction
	hitltest.WaitFor(t, "the tool call to wait", func() bool {
		var err error
		list, _, err = f.broker.List(context.Background(), hitl.ListFilter{Status: hitl.StatusPending})
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		return len(list) == n && f.broker.Waiting() == n
	})
	return list[0]
}

// text returns the text of a tool result.
func text(t *testing.T, res *mcp.CallToolResult) string {
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
