package mcpgate

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/hitl-sh/hitl/shell"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Upstream is a server the gate fronts: a stdio command it starts, or a
// Streamable HTTP server's URL.
type Upstream struct {
	// Name names the server for people and rules, and in the gate's path
	// (/mcp/gate/NAME).
	Name string
	// Command is the stdio server's command line; nil for a URL.
	Command []string
	// URL is the Streamable HTTP server's endpoint; "" for a command.
	URL string
	// Env is added to the command's environment (the gate's own, which it
	// inherits); Headers are sent with every request to the URL. Either
	// may hold credentials: neither is ever logged.
	Env     map[string]string
	Headers map[string]string
}

// validName is what a gated server may be called: it goes into a URL
// path and into action names. Compiled when first used, not at every
// start of hitl (an agent's command hook starts it for each tool call).
var validName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`) })

// ParseUpstream reads NAME=URL (http or https) or NAME=COMMAND [ARGS…],
// the command split into words as a shell would (quotes removed), with
// nothing a shell would expand or run: no variables, globs, pipes or
// redirections.
func ParseUpstream(spec string) (Upstream, error) {
	name, target, ok := strings.Cut(spec, "=")
	name, target = strings.TrimSpace(name), strings.TrimSpace(target)
	switch {
	case !ok || target == "":
		return Upstream{}, fmt.Errorf("gated server %q: want NAME=URL or NAME=COMMAND [ARGS…]", spec)
	case !validName().MatchString(name):
		return Upstream{}, fmt.Errorf("gated server name %q: use letters, digits, '.', '_' and '-' (at most 64)", name)
	}
	if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") {
		u, err := url.Parse(target)
		if err != nil || u.Host == "" {
			return Upstream{}, fmt.Errorf("gated server %s: %q is not a URL", name, target)
		}
		return Upstream{Name: name, URL: target}, nil
	}
	p, err := shell.ParsePattern(target)
	if err != nil {
		return Upstream{}, fmt.Errorf("gated server %s: the command must be plain words: %w", name, err)
	}
	return Upstream{Name: name, Command: p.Words()}, nil
}

// Transport returns the transport to the upstream; a command's stderr
// goes to stderr.
func (u Upstream) Transport(hc *http.Client, stderr io.Writer) mcp.Transport {
	if u.URL != "" {
		if len(u.Headers) > 0 {
			hc = withHeaders(hc, u.Headers)
		}
		return Streamable(u.URL, hc)
	}
	t := Command(u.Command, stderr)
	if len(u.Env) > 0 {
		cmd := t.(*mcp.CommandTransport).Command
		cmd.Env = os.Environ()
		for k, v := range u.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	return t
}

// withHeaders returns a copy of hc (nil: http.DefaultClient) that sets
// headers on every request.
func withHeaders(hc *http.Client, headers map[string]string) *http.Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	c := *hc
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		for k, v := range headers {
			r.Header.Set(k, v)
		}
		return base.RoundTrip(r)
	})
	return &c
}

// roundTripFunc is a function as an http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// String describes the upstream for logs without what may be secret: a
// URL's credentials and query, a command's arguments.
func (u Upstream) String() string {
	if u.URL != "" {
		p, err := url.Parse(u.URL)
		if err != nil {
			return u.Name + "=(a URL)"
		}
		p.User, p.RawQuery = nil, ""
		return u.Name + "=" + p.String()
	}
	return u.Name + "=" + path.Base(u.Command[0]) + " …"
}
