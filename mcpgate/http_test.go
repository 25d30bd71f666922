package mcpgate_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/mcpgate"
	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer sets a request's header, as a client with a token does.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// TestHandlerSessions serves a gated upstream (itself over Streamable
// HTTP) at /mcp/gate/up: a client's calls are reviewed; its session is
// bound to its token, so another token's requests with the session id
// are refused; an unknown name is not found.
func TestHandlerSessions(t *testing.T) {
	b := hitltest.StartBroker(t)
	u := newUpstream()
	upstream := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return u.server }, nil))
	t.Cleanup(upstream.Close)
	spec, err := mcpgate.ParseUpstream("up=" + upstream.URL)
	if err != nil {
		t.Fatal(err)
	}
	g, err := mcpgate.New(b, &mcpgate.Options{Server: "up"})
	if err != nil {
		t.Fatal(err)
	}
	h := mcpgate.NewHandler("/mcp/gate/", []mcpgate.Route{{Gate: g, Upstream: spec}}, nil, nil, nil)
	t.Cleanup(h.Close)
	auth := mcpauth.RequireBearerToken(func(_ context.Context, tok string, _ *http.Request) (*mcpauth.TokenInfo, error) {
		return &mcpauth.TokenInfo{UserID: "token:" + tok}, nil
	}, &mcpauth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp/gate/", auth(h))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	hc := &http.Client{Transport: bearer{"alice", http.DefaultTransport}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-agent", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp/gate/up", HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: legacy})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	ch := call(cs, context.Background(), "write", map[string]any{"text": "over http"})
	in := pending(t, b)
	if in.Action.Name != "mcp__up__write" {
		t.Fatalf("asked about %q, want mcp__up__write", in.Action.Name)
	}
	answer(t, b, in.ID, `{"decision": "approve"}`)
	if got, isErr := wait(t, ch); isErr || got != "wrote over http" {
		t.Fatalf("approved write over HTTP = %q (error %v)", got, isErr)
	}

	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp/gate/up", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
	req.Header.Set("Authorization", "Bearer mallory")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("another token's request in alice's session: %d, want 404", resp.StatusCode)
	}
	resp, err = hc.Post(srv.URL+"/mcp/gate/nope", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown gate: %d, want 404", resp.StatusCode)
	}
}

func TestParseUpstream(t *testing.T) {
	for spec, want := range map[string]string{
		"fs=npx -y '@modelcontextprotocol/server-filesystem' /srv": "fs [npx -y @modelcontextprotocol/server-filesystem /srv] ",
		"gh=https://mcp.example.com/mcp":                           "gh [] https://mcp.example.com/mcp",
	} {
		u, err := mcpgate.ParseUpstream(spec)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if got := u.Name + " " + "[" + strings.Join(u.Command, " ") + "] " + u.URL; got != want {
			t.Errorf("%s = %s, want %s", spec, got, want)
		}
	}
	for _, bad := range []string{"fs", "=x", "bad name=x", "fs=rm -rf $HOME", "fs=a | b", "fs=http://"} {
		if _, err := mcpgate.ParseUpstream(bad); err == nil {
			t.Errorf("%q parsed, want an error", bad)
		}
	}
}
