package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Timeouts of hitl mcp's requests to the server: connecting fails fast, so
// a tool call against a server that is not running says so at once
// instead of hanging.
const (
	mcpDialTimeout = 5 * time.Second
	// mcpHeaderTimeout bounds the wait for a response's headers; a
	// long-poll holds them for up to the client's poll timeout.
	mcpHeaderTimeout = client.DefaultPollTimeout + 30*time.Second
)

// runMCP serves the MCP tools on stdin and stdout for a running server.
// Exit codes: 0 when the MCP client disconnects (or on SIGINT/SIGTERM),
// 1 on a transport failure, 2 for bad flags.
func runMCP(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("mcp", "hitl mcp [flags]",
		"Serves hitl's MCP tools, ask_human and human_feedback, over stdio for an MCP\n"+
			"client such as Claude Code, Claude Desktop or Cursor, and forwards every\n"+
			"question to a running hitl server (start one with \"hitl serve\"). A tool\n"+
			"call blocks until a person answers in the inbox, on Slack or with the CLI.\n"+
			"permission_prompt answers Claude Code's permission prompts (claude\n"+
			"--permission-prompt-tool mcp__hitl__permission_prompt).\n\n"+
			"MCP messages go to stdout; logs go to stderr. HITL_TOKEN, if set, is sent\n"+
			"as a bearer token. \"hitl serve\" also serves the same tools over streamable\n"+
			"HTTP at /mcp, for clients that prefer a URL.\n\n"+
			"With --channel it is also a Claude Code channel: in a session started with\n"+
			"--dangerously-load-development-channels server:hitl (or --channels), Claude\n"+
			"Code relays each permission prompt it shows, and a person's approve or\n"+
			"reject in hitl answers it; the terminal can still answer first. See\n"+
			"docs/agents/claude-code-channel.md.", stderr)
	base := serverFlag(fs)
	agent := fs.String("agent", envOr("HITL_AGENT", ""), "agent `name` shown with every question (HITL_AGENT); default: the MCP client's name")
	progress := fs.Duration("progress-interval", mcpserver.DefaultProgressInterval, "how often a waiting tool call reports progress, to clients that ask for it")
	channel := envBoolVar(fs, "channel", "HITL_MCP_CHANNEL", "be a Claude Code channel: relay its permission prompts to hitl")
	channelTimeout := fs.Duration("channel-timeout", mcpserver.DefaultChannelTimeout, "how long a person has to answer a relayed permission prompt in hitl;\nafter it the prompt is left to the terminal")
	localFirst := envBoolVar(fs, "local-first", "HITL_MCP_LOCAL_FIRST", "ask the person at the MCP client too (elicitation), when the client\nsupports it: whoever answers first, there or in hitl, wins")
	logLevel := fs.String("log-level", envOr("HITL_LOG_LEVEL", "info"), "log level on stderr: debug, info, warn or error (HITL_LOG_LEVEL)")
	if code, ok := parse(fs, args, 2); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hitl mcp: unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return 2
	}
	if *progress <= 0 {
		fmt.Fprintln(stderr, "hitl mcp: --progress-interval must be positive")
		return 2
	}
	if *channelTimeout <= 0 {
		fmt.Fprintln(stderr, "hitl mcp: --channel-timeout must be positive")
		return 2
	}
	log, err := newLogger(stderr, "text", *logLevel)
	if err != nil {
		fmt.Fprintf(stderr, "hitl mcp: %v\n", err)
		return 2
	}
	c := mcpClient(*base, log)
	srv := mcpserver.New(c, &mcpserver.Options{Logger: log, ProgressInterval: *progress, SourceAgent: *agent, Version: buildVersion(),
		Channel: channel.on(), ChannelTimeout: *channelTimeout, LocalFirst: localFirst.on()})
	log.Info("hitl mcp serving on stdio", "server", c.BaseURL(), "version", buildVersion(), "channel", channel.on())
	err = srv.Run(ctx, &mcp.IOTransport{Reader: os.Stdin, Writer: nopCloser{stdout}})
	switch {
	case err == nil, ctx.Err() != nil, errors.Is(err, io.EOF), errors.Is(err, mcp.ErrConnectionClosed):
		return 0
	}
	fmt.Fprintf(stderr, "hitl mcp: %v\n", err)
	return 1
}

// mcpClient is the client of hitl at base that hitl mcp and hitl gate ask
// through: HITL_TOKEN, the MCP channel, log.
func mcpClient(base string, log *slog.Logger) *client.Client {
	return client.New(base, &client.Options{
		HTTPClient: mcpHTTPClient(),
		Token:      os.Getenv("HITL_TOKEN"),
		Channel:    hitl.ChannelMCP,
		Logger:     log,
	})
}

// mcpHTTPClient returns the HTTP client hitl mcp talks to the server with:
// bounded connect and header timeouts, no overall timeout (long-polls).
func mcpHTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: mcpDialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   mcpDialTimeout,
		ResponseHeaderTimeout: mcpHeaderTimeout,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   16,
	}}
}

// nopCloser is a writer whose Close does nothing, so the MCP transport
// does not close the process's stdout.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
