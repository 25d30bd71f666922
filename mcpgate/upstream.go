package mcpgate

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Command returns the transport to a stdio MCP server that argv starts;
// the server's stderr goes to stderr (nil discards it).
func Command(argv []string, stderr io.Writer) mcp.Transport {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = stderr
	return &mcp.CommandTransport{Command: cmd}
}

// Streamable returns the transport to a Streamable HTTP MCP server at
// endpoint, through hc (nil: http.DefaultClient). Requests after the
// handshake carry the protocol version it negotiated.
func Streamable(endpoint string, hc *http.Client) mcp.Transport {
	if hc == nil {
		hc = http.DefaultClient
	}
	v := &negotiated{}
	c := *hc
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = &versionHeader{base: base, v: v}
	return &streamable{t: &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &c, DisableStandaloneSSE: true}, v: v}
}

// negotiated is the protocol version an HTTP upstream agreed to.
type negotiated struct {
	mu      sync.Mutex
	version string
}

func (n *negotiated) get() string  { n.mu.Lock(); defer n.mu.Unlock(); return n.version }
func (n *negotiated) set(v string) { n.mu.Lock(); n.version = v; n.mu.Unlock() }

// versionHeader sets MCP-Protocol-Version on requests that lack it.
type versionHeader struct {
	base http.RoundTripper
	v    *negotiated
}

func (t *versionHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	if v := t.v.get(); v != "" && r.Header.Get("Mcp-Protocol-Version") == "" {
		r = r.Clone(r.Context())
		r.Header.Set("Mcp-Protocol-Version", v)
	}
	return t.base.RoundTrip(r)
}

// streamable is a Streamable HTTP transport that notes the negotiated
// protocol version from the initialize result it reads.
type streamable struct {
	t *mcp.StreamableClientTransport
	v *negotiated
}

func (s *streamable) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := s.t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &versionConn{Connection: c, v: s.v}, nil
}

// versionConn reads the protocol version from the first initialize
// result that passes.
type versionConn struct {
	mcp.Connection
	v *negotiated
}

func (c *versionConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if res, ok := msg.(*jsonrpc.Response); ok && err == nil && c.v.get() == "" && res.Error == nil {
		var r struct {
			ProtocolVersion string          `json:"protocolVersion"`
			ServerInfo      json.RawMessage `json:"serverInfo"`
		}
		if decode(res.Result, &r) == nil && r.ProtocolVersion != "" && !isNull(r.ServerInfo) {
			c.v.set(r.ProtocolVersion)
		}
	}
	return msg, err
}
