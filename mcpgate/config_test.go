package mcpgate

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// writeConfig writes a gate configuration file and returns its path.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gates.json")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLoadConfig reads a file in the shape MCP clients write, with the
// gate's keys beside each server.
func TestLoadConfig(t *testing.T) {
	gs, err := LoadConfig(writeConfig(t, `{"mcpServers": {
		"files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv"], "env": {"TOKEN": "s3cret"},
			"review": ["write_*"], "pass": ["read_*"], "elicit": "hitl", "timeout": "2m", "elicit_timeout": "30s"},
		"github": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer t0ken"}}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 2 || gs[0].Upstream.Name != "files" || gs[1].Upstream.Name != "github" {
		t.Fatalf("servers %+v; want files and github, by name", gs)
	}
	f, g := gs[0], gs[1]
	if !slices.Equal(f.Upstream.Command, []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv"}) || f.Upstream.Env["TOKEN"] != "s3cret" {
		t.Errorf("files upstream %+v", f.Upstream)
	}
	if f.Policy == nil || !slices.Equal(f.Policy.Review, []string{"write_*"}) || !slices.Equal(f.Policy.Pass, []string{"read_*"}) ||
		f.Elicit != ElicitHitl || f.Timeout != 2*time.Minute || f.ElicitTimeout != 30*time.Second {
		t.Errorf("files gate %+v, policy %+v", f, f.Policy)
	}
	if g.Upstream.URL != "https://mcp.example.com/mcp" || g.Upstream.Headers["Authorization"] != "Bearer t0ken" || g.Policy != nil || g.Timeout != 0 {
		t.Errorf("github %+v: want its URL and headers and the default gate", g)
	}
	for _, secret := range []string{"s3cret", "t0ken", "/srv"} {
		if s := f.Upstream.String() + g.Upstream.String(); strings.Contains(s, secret) {
			t.Errorf("the upstreams as logged (%s) show %q", s, secret)
		}
	}
}

// TestLoadConfigRefuses: a file that says something the gate cannot do,
// or says it unclearly, stops the start with the server and the reason.
func TestLoadConfigRefuses(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"no servers", `{"mcpServers": {}}`, "no servers"},
		{"unknown top-level key", `{"servers": {"a": {"command": "x"}}}`, "unknown field"},
		{"misspelt policy", `{"mcpServers": {"a": {"command": "x", "reveiw": ["*"]}}}`, "unknown field"},
		{"neither", `{"mcpServers": {"a": {"args": ["x"]}}}`, "give a command or a url"},
		{"both", `{"mcpServers": {"a": {"command": "x", "url": "https://h/mcp"}}}`, "not both"},
		{"bad name", `{"mcpServers": {"a b": {"command": "x"}}}`, "server name"},
		{"not a URL", `{"mcpServers": {"a": {"url": "ftp://h"}}}`, "not an http"},
		{"headers on a command", `{"mcpServers": {"a": {"command": "x", "headers": {"A": "b"}}}}`, "stdio"},
		{"env on a URL", `{"mcpServers": {"a": {"url": "https://h/mcp", "env": {"A": "b"}}}}`, "Streamable HTTP"},
		{"type mismatch", `{"mcpServers": {"a": {"type": "sse", "url": "https://h/mcp"}}}`, "Streamable HTTP"},
		{"bad glob", `{"mcpServers": {"a": {"command": "x", "review": ["["]}}}`, "pattern"},
		{"bad elicit", `{"mcpServers": {"a": {"command": "x", "elicit": "maybe"}}}`, "elicit must be"},
		{"bad timeout", `{"mcpServers": {"a": {"command": "x", "timeout": "-1m"}}}`, "timeout"},
		{"bad env name", `{"mcpServers": {"a": {"command": "x", "env": {"A=B": "c"}}}}`, "environment variable"},
		{"not JSON", `mcpServers: {}`, "invalid character"},
	} {
		_, err := LoadConfig(writeConfig(t, c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error saying %q", c.name, err, c.want)
		}
	}
	if _, err := LoadConfig(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Errorf("a missing file was read")
	}
}

// TestUpstreamEnvAndHeaders: a command's env is added to the gate's own
// environment, and a URL's headers go with every request.
func TestUpstreamEnvAndHeaders(t *testing.T) {
	t.Setenv("HITL_GATE_TEST_INHERITED", "yes")
	u := Upstream{Name: "a", Command: []string{"true"}, Env: map[string]string{"TOKEN": "s3cret"}}
	env := u.Transport(nil, io.Discard).(*mcp.CommandTransport).Command.Env
	if !slices.Contains(env, "TOKEN=s3cret") || !slices.Contains(env, "HITL_GATE_TEST_INHERITED=yes") {
		t.Errorf("the command's environment lacks its env or the gate's own")
	}
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.Header.Get("Authorization"):
		default:
		}
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	defer srv.Close()
	hc := withHeaders(srv.Client(), map[string]string{"Authorization": "Bearer t0ken"})
	resp, err := hc.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if a := <-got; a != "Bearer t0ken" {
		t.Errorf("Authorization %q; want the configured header", a)
	}
}
