// Package mcpserver serves hitl's agent tools, ask_human, human_feedback
// and handoff_to_human, and Claude Code's permission_prompt over the Model
// Context Protocol with the official Go SDK,
// on top of any hitl.Service: the in-process engine (hitl serve mounts the
// streamable HTTP handler at /mcp) or the HTTP client (hitl mcp serves
// stdio for a remote server).
//
// A tool call blocks until the person answers (handoff_to_human returns
// at once: the person's reply resumes the agent through its orchestrator). While it waits, a client
// that sent a progress token gets a progress notification every
// ProgressInterval; a client that cancels the request cancels the
// interaction on the server, so it leaves the person's inbox. Expiry,
// cancellation and invalid requests are tool errors (isError) the model
// can read; protocol errors are left for protocol problems.
// permission_prompt (see permission.go) never fails: every problem is a
// deny. A client may run the asking tools as MCP tasks instead, and
// collect the answer later from any connection (see task.go). With Options.Channel the server is also a Claude Code channel
// that relays permission prompts (see channel.go).
package mcpserver

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/tools"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultProgressInterval is how often a waiting tool call reports
// progress to a client that asked for it.
const DefaultProgressInterval = 20 * time.Second

// sessionTimeout closes HTTP sessions idle this long (a tool call in
// flight keeps its session alive).
const sessionTimeout = time.Hour

// instructions tell the model what the server is for.
const instructions = `hitl puts a person in the loop. Call ask_human (typed: approval, single or multiple choice, form, free text) or human_feedback (a message in, the reply as text) when you need a person's approval before a risky or irreversible action, information only they have (such as a 2FA or one-time code), or a decision you should not guess. Each call blocks until the person answers or its timeout passes; an expired or cancelled question is an error, not an answer. Call handoff_to_human to give the conversation to a person and stop: it returns at once, and the person's reply resumes the conversation. permission_prompt is for Claude Code's --permission-prompt-tool, not for you.`

// Options configure a Server. The zero value (or nil) is usable.
type Options struct {
	// Logger receives a line per tool call (never the answer) and internal
	// errors; nil discards them.
	Logger *slog.Logger
	// ProgressInterval is how often a waiting call sends a progress
	// notification when the client sent a progress token; 0 means
	// DefaultProgressInterval.
	ProgressInterval time.Duration
	// SourceAgent names the agent on every interaction the server creates;
	// "" means the MCP client's name (its clientInfo).
	SourceAgent string
	// Version is the version reported to MCP clients.
	Version string
	// Channel makes the server a Claude Code channel that relays
	// permission prompts (see channel.go) on the connections it serves
	// with Run and Connect; Handler's HTTP sessions are not channels.
	Channel bool
	// ChannelTimeout is how long a person has to answer a relayed prompt;
	// 0 means DefaultChannelTimeout.
	ChannelTimeout time.Duration
	// LocalFirst asks ask_human's and human_feedback's questions of the
	// person at the client too, through MCP elicitation, when the client
	// supports it: whoever answers first, there or in hitl, wins (see
	// localfirst.go).
	LocalFirst bool
	// TaskPollInterval is how often a task suggests its client poll
	// tasks/get (see task.go); 0 means DefaultTaskPollInterval.
	TaskPollInterval time.Duration
	// TaskRetention is how long the server keeps a question after it ends
	// (hitl serve's --retention): a task's ttl is its question's lifetime
	// plus this. 0 means unknown, and the ttl is the lifetime alone (a
	// lower bound); KeepForever means no ttl (null).
	TaskRetention time.Duration
}

// KeepForever is Options.TaskRetention for a server that keeps every
// question.
const KeepForever time.Duration = -1

// Server is hitl's MCP server. Serve it over HTTP with Handler, or over
// any MCP transport (such as stdio) with Run.
type Server struct {
	svc      hitl.Service
	log      *slog.Logger
	progress time.Duration
	agent    string
	mcp      *mcp.Server

	channel        bool
	channelTimeout time.Duration
	localFirstOn   bool

	taskPoll      time.Duration
	taskRetention time.Duration
	clients       *clientNames
}

// New returns an MCP server whose tools ask through svc.
func New(svc hitl.Service, opts *Options) *Server {
	if opts == nil {
		opts = &Options{}
	}
	s := &Server{svc: svc, log: opts.Logger, progress: opts.ProgressInterval, agent: opts.SourceAgent,
		channel: opts.Channel, channelTimeout: opts.ChannelTimeout, localFirstOn: opts.LocalFirst}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if s.progress <= 0 {
		s.progress = DefaultProgressInterval
	}
	s.taskPoll = opts.TaskPollInterval
	if s.taskPoll <= 0 {
		s.taskPoll = DefaultTaskPollInterval
	}
	s.taskRetention = opts.TaskRetention
	s.clients = newClientNames()
	if s.channelTimeout <= 0 {
		s.channelTimeout = DefaultChannelTimeout
	}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	sopts := &mcp.ServerOptions{
		Instructions: instructions,
		Capabilities: &mcp.ServerCapabilities{}, // tools only, no logging
	}
	if s.channel {
		sopts.Capabilities.Experimental = map[string]any{tools.ChannelCapability: map[string]any{}, tools.ChannelPermissionCapability: map[string]any{}}
		sopts.SupportedProtocolVersions = channelVersions()
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "hitl", Title: "hitl: ask a human", Version: version}, sopts)
	for _, t := range tools.All() {
		s.mcp.AddTool(mcpTool(t), s.handler(t))
	}
	s.mcp.AddTool(mcpTool(tools.PermissionPrompt()), s.permissionPrompt)
	s.mcp.AddReceivingMiddleware(s.declareTasks)
	return s
}

// mcpTool returns the SDK's definition of t.
func mcpTool(t tools.Tool) *mcp.Tool {
	notDestructive, openWorld := false, true
	mt := &mcp.Tool{
		Name:        t.Name,
		Title:       t.Title,
		Description: t.Description,
		InputSchema: t.InputSchema,
		Annotations: &mcp.ToolAnnotations{
			Title:           t.Title,
			DestructiveHint: &notDestructive,
			IdempotentHint:  t.Name == tools.HumanFeedbackName, // the same unique_id is the same request
			OpenWorldHint:   &openWorld,
		},
	}
	if t.OutputSchema != nil {
		mt.OutputSchema = t.OutputSchema
	}
	return mt
}

// Handler returns the streamable HTTP handler, for a route such as /mcp.
// It serves clients of every protocol version the SDK speaks; a client
// that cancels its request cancels the interaction.
func (s *Server) Handler() http.Handler {
	return &taskHandler{s: s, next: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		SessionTimeout:               sessionTimeout,
		PropagateRequestCancellation: true,
	})}
}

// Run serves one client over t (such as &mcp.StdioTransport{}) until the
// client disconnects or ctx ends. A channel (Options.Channel) returns once
// the questions it relayed are withdrawn too.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	tt := s.taskTransport(ctx, t)
	defer tt.wait()
	t = tt
	if !s.channel {
		return s.mcp.Run(ctx, t)
	}
	ct := s.channelTransport(ctx, t)
	defer ct.wait()
	return s.mcp.Run(ctx, ct)
}

// Connect serves one client over t in the background, returning its
// session (for in-memory transports and tests).
func (s *Server) Connect(ctx context.Context, t mcp.Transport) (*mcp.ServerSession, error) {
	t = s.taskTransport(ctx, t)
	if s.channel {
		t = s.channelTransport(ctx, t)
	}
	return s.mcp.Connect(ctx, t, nil)
}

// channelTransport returns t relaying permission requests, asking as
// ctx's caller on the MCP channel.
func (s *Server) channelTransport(ctx context.Context, t mcp.Transport) *channelTransport {
	caller := hitl.CallerFrom(ctx)
	caller.Channel = hitl.ChannelMCP
	return &channelTransport{Transport: t, s: s, ctx: hitl.WithCaller(ctx, caller)}
}

// handler returns the tool handler for t.
func (s *Server) handler(t tools.Tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		caller := hitl.CallerFrom(ctx)
		caller.Channel = hitl.ChannelMCP
		ctx = hitl.WithCaller(ctx, caller)
		// A call whose caller's credentials stop holding (a revoked
		// token) ends, and its question is withdrawn.
		ctx, stop := hitl.WatchCredentials(ctx)
		defer stop()
		if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
			stop := s.reportProgress(ctx, req.Session, tok)
			defer stop()
		}
		start := time.Now()
		var r *tools.Result
		if s.localFirstOn && t.Name != tools.HandoffName && canElicit(req.Session) {
			r, _ = s.localFirst(ctx, req.Session, t.Name, req.Params.Arguments, s.sourceAgent(req))
		}
		if r == nil {
			r = tools.Call(ctx, s.svc, t.Name, req.Params.Arguments, &tools.CallOptions{SourceAgent: s.sourceAgent(req)})
		}
		s.logCall(ctx, t.Name, r, time.Since(start))
		return toolResult(t, r), nil
	}
}

// toolResult returns the MCP result of a call of t that ended with r.
func toolResult(t tools.Tool, r *tools.Result) *mcp.CallToolResult {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Text}}, IsError: r.IsError}
	switch {
	case t.Name == tools.HandoffName:
		if r.HandoffResult != nil {
			res.StructuredContent = r.HandoffResult
		}
	case t.OutputSchema != nil && r.Outcome != nil:
		res.StructuredContent = r.Outcome
	}
	return res
}

// sourceAgent is the agent to record: the configured one, else the MCP
// client's name.
func (s *Server) sourceAgent(req *mcp.CallToolRequest) string {
	if s.agent != "" {
		return s.agent
	}
	if req.Session == nil {
		return ""
	}
	if info := req.ClientInfo(); info != nil {
		return clip(info.Name, hitl.MaxProvenanceLen)
	}
	return ""
}

// clip shortens s to at most n bytes without cutting a character: a
// client's name is whatever the client says, and should not make its
// questions fail for being longer than source_agent may be.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// reportProgress sends a progress notification for tok every interval
// until the returned stop is called or ctx ends.
func (s *Server) reportProgress(ctx context.Context, ss *mcp.ServerSession, tok any) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		tick := time.NewTicker(s.progress)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			waited := time.Since(start)
			err := ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: tok,
				Progress:      waited.Seconds(),
				Message:       fmt.Sprintf("waiting for a person to answer (%s so far)", waited.Round(time.Second)),
			})
			if err != nil {
				s.log.Debug("progress notification failed", "error", err)
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// logCall logs a finished tool call, never the answer.
func (s *Server) logCall(ctx context.Context, tool string, r *tools.Result, took time.Duration) {
	attrs := []any{"tool", tool, "is_error", r.IsError, "duration_ms", took.Milliseconds()}
	if in := r.Interaction; in != nil {
		attrs = append(attrs, "interaction_id", in.ID, "status", in.Status)
	}
	level := slog.LevelInfo
	if r.Err != nil && hitl.ErrorCode(r.Err) == hitl.EINTERNAL && ctx.Err() == nil {
		level = slog.LevelError
		attrs = append(attrs, "error", r.Err)
	}
	s.log.Log(ctx, level, "mcp tool call", attrs...)
}
