package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/mcpgate"
)

// gateConfig is hitl serve's gated MCP servers, served at /mcp/gate/NAME.
type gateConfig struct {
	specs         []string
	review, pass  *[]string
	elicit        string
	timeoutFlag   string
	elicitFlag    string
	timeout       time.Duration
	elicitTimeout time.Duration
	upstreams     []mcpgate.Upstream
}

// gateFlags defines hitl serve's flags for gated MCP servers.
func gateFlags(fs *flag.FlagSet) *gateConfig {
	c := &gateConfig{}
	fs.Func("gate", "serve the MCP server `NAME=URL` or NAME=COMMAND [ARGS…] at /mcp/gate/NAME with\nits tool calls reviewed in hitl; repeat for more, or separate them by ';' in the\nvariable (HITL_GATES)", func(s string) error {
		c.specs = append(c.specs, s)
		return nil
	})
	for _, s := range strings.Split(os.Getenv("HITL_GATES"), ";") {
		if s = strings.TrimSpace(s); s != "" {
			c.specs = append(c.specs, s)
		}
	}
	c.review = globsFlag(fs, "gate-review", "HITL_GATE_REVIEW", "tool-name `glob` of a gated server whose calls are always reviewed (HITL_GATE_REVIEW)")
	c.pass = globsFlag(fs, "gate-pass", "HITL_GATE_PASS", "tool-name `glob` of a gated server whose calls pass without review (HITL_GATE_PASS)")
	fs.StringVar(&c.elicit, "gate-elicit", envOr("HITL_GATE_ELICIT", string(mcpgate.ElicitClientElseHitl)), "who answers a gated server's elicitations: hitl, client or client-else-hitl (HITL_GATE_ELICIT)")
	fs.StringVar(&c.timeoutFlag, "gate-timeout", envOr("HITL_GATE_TIMEOUT", mcpgate.DefaultTimeout.String()), "how long a person has to decide on a gated call (a `duration`) (HITL_GATE_TIMEOUT)")
	fs.StringVar(&c.elicitFlag, "gate-elicit-timeout", envOr("HITL_GATE_ELICIT_TIMEOUT", mcpgate.DefaultElicitTimeout.String()), "how long a person has to answer a gated server's elicitation (a `duration`)\n(HITL_GATE_ELICIT_TIMEOUT)")
	return c
}

// check reads the gated servers.
func (c *gateConfig) check() error {
	seen := map[string]bool{}
	for _, s := range c.specs {
		u, err := mcpgate.ParseUpstream(s)
		if err != nil {
			return fmt.Errorf("--gate: %w", err)
		}
		if seen[u.Name] {
			return fmt.Errorf("--gate: %s is named twice", u.Name)
		}
		seen[u.Name] = true
		c.upstreams = append(c.upstreams, u)
	}
	var err1, err2 error
	c.timeout, err1 = time.ParseDuration(strings.TrimSpace(c.timeoutFlag))
	c.elicitTimeout, err2 = time.ParseDuration(strings.TrimSpace(c.elicitFlag))
	if err1 != nil || err2 != nil || c.timeout <= 0 || c.elicitTimeout <= 0 {
		return fmt.Errorf("--gate-timeout and --gate-elicit-timeout must be positive durations, such as 10m")
	}
	if _, err := mcpgate.New(nil, c.options("x", nil)); err != nil {
		return fmt.Errorf("--gate: %w", err)
	}
	return nil
}

// options are the gate options of the server named name.
func (c *gateConfig) options(name string, log *slog.Logger) *mcpgate.Options {
	return &mcpgate.Options{
		Server:        name,
		Policy:        &mcpgate.Policy{Review: *c.review, Pass: *c.pass},
		Timeout:       c.timeout,
		Elicit:        mcpgate.ElicitMode(c.elicit),
		ElicitTimeout: c.elicitTimeout,
		Logger:        log,
	}
}

// handler returns the handler of the gated servers, asking through svc;
// nil when there are none.
func (c *gateConfig) handler(svc hitl.Service, stderr io.Writer, log *slog.Logger) (*mcpgate.Handler, error) {
	if len(c.upstreams) == 0 {
		return nil, nil
	}
	var routes []mcpgate.Route
	for _, u := range c.upstreams {
		g, err := mcpgate.New(svc, c.options(u.Name, log))
		if err != nil {
			return nil, err
		}
		routes = append(routes, mcpgate.Route{Gate: g, Upstream: u})
		log.Info("gating an MCP server", "path", "/mcp/gate/"+u.Name, "upstream", u.String())
	}
	return mcpgate.NewHandler("/mcp/gate/", routes, mcpHTTPClient(), stderr, log), nil
}
