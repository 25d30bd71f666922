package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/hitl-sh/hitl/mcpgate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// runGate serves an MCP server to an MCP client on stdio with its tool
// calls reviewed in hitl. Exit codes: 0 when the client disconnects (or
// on SIGINT/SIGTERM), 1 when the upstream fails, 2 for bad flags.
func runGate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("gate", "hitl gate [flags] -- COMMAND [ARGS…]\n       hitl gate [flags] --upstream URL",
		"Puts a person in front of an MCP server. It starts the stdio MCP server\n"+
			"COMMAND (or connects to the Streamable HTTP server at --upstream) and serves\n"+
			"it on stdio to an MCP client such as Claude Desktop, Cursor or Claude Code.\n"+
			"Everything passes through untouched except the tool calls the policy gates:\n"+
			"each becomes an action in hitl (kind mcp, named mcp__SERVER__TOOL), and runs\n"+
			"only when a person, or a rule, approves it. A rejected, expired or unaskable\n"+
			"call returns an error result and never reaches the server.\n\n"+
			"By default every tool is gated unless the server annotates it readOnlyHint\n"+
			"(and not destructiveHint); --review and --pass name tools by glob.\n"+
			"The server's elicitations are asked in hitl or passed to the client\n"+
			"(--elicit). HITL_TOKEN, if set, is sent as a bearer token. See\n"+
			"docs/mcp-gate.md.", stderr)
	base := serverFlag(fs)
	upstream := fs.String("upstream", envOr("HITL_GATE_UPSTREAM", ""), "`URL` of a Streamable HTTP MCP server to front, instead of a COMMAND (HITL_GATE_UPSTREAM)")
	name := fs.String("name", envOr("HITL_GATE_NAME", ""), "server `name` for people and rules (mcp__NAME__TOOL) (HITL_GATE_NAME); default: the name the server gives itself")
	agent := fs.String("agent", envOr("HITL_AGENT", ""), "agent `name` the questions come from, which rules are scoped to (HITL_AGENT); default: the MCP client's name")
	review := globsFlag(fs, "review", "HITL_GATE_REVIEW", "tool-name `glob` whose calls are always reviewed; repeat or separate with commas (HITL_GATE_REVIEW)")
	pass := globsFlag(fs, "pass", "HITL_GATE_PASS", "tool-name `glob` whose calls pass without review, unless --review names them too (HITL_GATE_PASS)")
	timeout := fs.Duration("timeout", mcpgate.DefaultTimeout, "how long a person has to decide on a call")
	elicit := fs.String("elicit", envOr("HITL_GATE_ELICIT", string(mcpgate.ElicitClientElseHitl)), "who answers the server's elicitations: hitl, client, or client-else-hitl\n(the client when it declared support, else hitl) (HITL_GATE_ELICIT)")
	elicitTimeout := fs.Duration("elicit-timeout", mcpgate.DefaultElicitTimeout, "how long a person has to answer an elicitation asked in hitl")
	progress := fs.Duration("progress-interval", mcpgate.DefaultProgressInterval, "how often a call waiting for a person reports progress, to clients that ask for it")
	logLevel := fs.String("log-level", envOr("HITL_LOG_LEVEL", "info"), "log level on stderr: debug, info, warn or error (HITL_LOG_LEVEL)")
	if code, ok := parse(fs, args, 2); !ok {
		return code
	}
	argv := fs.Args()
	switch {
	case *upstream == "" && len(argv) == 0:
		fmt.Fprintln(stderr, "hitl gate: give the MCP server to front: hitl gate -- COMMAND [ARGS…], or --upstream URL")
		return 2
	case *upstream != "" && len(argv) > 0:
		fmt.Fprintln(stderr, "hitl gate: give a COMMAND or --upstream, not both")
		return 2
	case *timeout <= 0 || *elicitTimeout <= 0 || *progress <= 0:
		fmt.Fprintln(stderr, "hitl gate: --timeout, --elicit-timeout and --progress-interval must be positive")
		return 2
	}
	log, err := newLogger(stderr, "text", *logLevel)
	if err != nil {
		fmt.Fprintf(stderr, "hitl gate: %v\n", err)
		return 2
	}
	c := mcpClient(*base, log)
	g, err := mcpgate.New(c, &mcpgate.Options{
		Server: *name, Agent: *agent,
		Policy:  &mcpgate.Policy{Review: *review, Pass: *pass},
		Timeout: *timeout, Elicit: mcpgate.ElicitMode(*elicit), ElicitTimeout: *elicitTimeout,
		ProgressInterval: *progress, Logger: log,
	})
	if err != nil {
		fmt.Fprintf(stderr, "hitl gate: %v\n", err)
		return 2
	}
	var tr mcp.Transport
	if *upstream != "" {
		tr = mcpgate.Streamable(*upstream, nil)
	} else {
		tr = mcpgate.Command(argv, stderr)
	}
	up, err := tr.Connect(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "hitl gate: start the upstream MCP server: %v\n", err)
		return 1
	}
	down, err := (&mcp.IOTransport{Reader: os.Stdin, Writer: nopCloser{stdout}}).Connect(ctx)
	if err != nil {
		up.Close()
		fmt.Fprintf(stderr, "hitl gate: %v\n", err)
		return 1
	}
	log.Info("hitl gate serving on stdio", "server", c.BaseURL(), "upstream", upstreamName(*upstream, argv), "elicit", *elicit)
	if err := g.Serve(ctx, down, up); err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		fmt.Fprintf(stderr, "hitl gate: %v\n", err)
		return 1
	}
	return 0
}

// upstreamName names the upstream in the log: the URL, or the command's
// program (its arguments may hold secrets).
func upstreamName(endpoint string, argv []string) string {
	if endpoint != "" {
		if u, err := url.Parse(endpoint); err == nil {
			return u.Redacted()
		}
		return "(an unparsable URL)"
	}
	return argv[0]
}

// globs is a repeatable flag of comma-separated globs.
type globs []string

func (g *globs) String() string { return strings.Join(*g, ",") }

func (g *globs) Set(s string) error {
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*g = append(*g, p)
		}
	}
	return nil
}

// globsFlag defines a repeatable glob flag, starting from the
// comma-separated environment variable env.
func globsFlag(fs *flag.FlagSet, name, env, usage string) *[]string {
	g := &globs{}
	_ = g.Set(os.Getenv(env))
	fs.Var(g, name, usage)
	return (*[]string)(g)
}
