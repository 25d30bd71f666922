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
	configFile    string
	gated         []mcpgate.Gated
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
	fs.StringVar(&c.configFile, "gate-config", envOr("HITL_GATE_CONFIG", ""), "a JSON `file` of gated MCP servers: \"mcpServers\" as MCP clients write it (command,\nargs, env; or url, headers), each with its own review, pass, elicit, timeout and\nelicit_timeout if wanted; served beside --gate's (HITL_GATE_CONFIG)")
	c.review = globsFlag(fs, "gate-review", "HITL_GATE_REVIEW", "tool-name `glob` of a gated server whose calls are always reviewed (HITL_GATE_REVIEW)")
	c.pass = globsFlag(fs, "gate-pass", "HITL_GATE_PASS", "tool-name `glob` of a gated server whose calls pass without review (HITL_GATE_PASS)")
	fs.StringVar(&c.elicit, "gate-elicit", envOr("HITL_GATE_ELICIT", string(mcpgate.ElicitClientElseHitl)), "who answers a gated server's elicitations: hitl, client or client-else-hitl (HITL_GATE_ELICIT)")
	fs.StringVar(&c.timeoutFlag, "gate-timeout", envOr("HITL_GATE_TIMEOUT", mcpgate.DefaultTimeout.String()), "how long a person has to decide on a gated call (a `duration`) (HITL_GATE_TIMEOUT)")
	fs.StringVar(&c.elicitFlag, "gate-elicit-timeout", envOr("HITL_GATE_ELICIT_TIMEOUT", mcpgate.DefaultElicitTimeout.String()), "how long a person has to answer a gated server's elicitation (a `duration`)\n(HITL_GATE_ELICIT_TIMEOUT)")
	return c
}

// check reads the gated servers: --gate's, then the configuration
// file's.
func (c *gateConfig) check() error {
	seen := map[string]bool{}
	add := func(g mcpgate.Gated) error {
		if seen[g.Upstream.Name] {
			return fmt.Errorf("--gate: %s is named twice", g.Upstream.Name)
		}
		seen[g.Upstream.Name] = true
		c.gated = append(c.gated, g)
		return nil
	}
	for _, s := range c.specs {
		u, err := mcpgate.ParseUpstream(s)
		if err != nil {
			return fmt.Errorf("--gate: %w", err)
		}
		if err := add(mcpgate.Gated{Upstream: u}); err != nil {
			return err
		}
	}
	if c.configFile != "" {
		file, err := mcpgate.LoadConfig(c.configFile)
		if err != nil {
			return fmt.Errorf("--gate-config: %w", err)
		}
		for _, g := range file {
			if err := add(g); err != nil {
				return err
			}
		}
	}
	var err1, err2 error
	c.timeout, err1 = time.ParseDuration(strings.TrimSpace(c.timeoutFlag))
	c.elicitTimeout, err2 = time.ParseDuration(strings.TrimSpace(c.elicitFlag))
	if err1 != nil || err2 != nil || c.timeout <= 0 || c.elicitTimeout <= 0 {
		return fmt.Errorf("--gate-timeout and --gate-elicit-timeout must be positive durations, such as 10m")
	}
	if _, err := mcpgate.New(nil, c.options(mcpgate.Gated{Upstream: mcpgate.Upstream{Name: "x"}}, nil)); err != nil {
		return fmt.Errorf("--gate: %w", err)
	}
	return nil
}

// options are the gate options of g: what the configuration file says
// for it, else the flags'.
func (c *gateConfig) options(g mcpgate.Gated, log *slog.Logger) *mcpgate.Options {
	o := &mcpgate.Options{
		Server:        g.Upstream.Name,
		Policy:        &mcpgate.Policy{Review: *c.review, Pass: *c.pass},
		Timeout:       c.timeout,
		Elicit:        mcpgate.ElicitMode(c.elicit),
		ElicitTimeout: c.elicitTimeout,
		Logger:        log,
	}
	if g.Policy != nil {
		o.Policy = g.Policy
	}
	if g.Elicit != "" {
		o.Elicit = g.Elicit
	}
	if g.Timeout > 0 {
		o.Timeout = g.Timeout
	}
	if g.ElicitTimeout > 0 {
		o.ElicitTimeout = g.ElicitTimeout
	}
	return o
}

// handler returns the handler of the gated servers, asking through svc;
// nil when there are none.
func (c *gateConfig) handler(svc hitl.Service, stderr io.Writer, log *slog.Logger) (*mcpgate.Handler, error) {
	if len(c.gated) == 0 {
		return nil, nil
	}
	var routes []mcpgate.Route
	for _, gd := range c.gated {
		g, err := mcpgate.New(svc, c.options(gd, log))
		if err != nil {
			return nil, err
		}
		routes = append(routes, mcpgate.Route{Gate: g, Upstream: gd.Upstream})
		log.Info("gating an MCP server", "path", "/mcp/gate/"+gd.Upstream.Name, "upstream", gd.Upstream.String())
	}
	return mcpgate.NewHandler("/mcp/gate/", routes, mcpHTTPClient(), stderr, log), nil
}
