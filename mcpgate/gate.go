// Package mcpgate puts a person in front of any MCP server: a proxy that
// passes every message between an MCP client and an upstream server
// through untouched, except the tools/call requests its policy gates,
// which become hitl actions (kind mcp) and reach the upstream only when a
// person (or a rule) approves them, and the upstream's elicitations, which
// it can ask of hitl's people instead of the client's user.
//
// The proxy works on JSON-RPC messages, not on one SDK's typed session,
// so methods it does not know (resources, prompts, completions, newer
// protocol revisions) pass as they are.
package mcpgate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/tools"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of Options.
const (
	DefaultTimeout          = tools.DefaultReviewTimeout
	DefaultElicitTimeout    = 10 * time.Minute
	DefaultProgressInterval = 15 * time.Second
	// DefaultAgent is the source agent of the gate's questions when the
	// client gives no name.
	DefaultAgent = "mcp-gate"
)

// Options configure a Gate. The zero value (or nil) is usable.
type Options struct {
	// Server names the upstream server for people and rules (the
	// SERVER in an action's name mcp__SERVER__TOOL); "" takes the name
	// the upstream gives itself when it initializes.
	Server string
	// Agent is the source agent of the gate's questions, which rules are
	// scoped to; "" takes the MCP client's name (so a rule made from
	// Claude Code's hooks applies to its gated calls too), or DefaultAgent.
	Agent string
	// Policy says which calls are reviewed; nil gates every tool not
	// annotated read-only.
	Policy *Policy
	// Timeout is how long a person has to decide on a call; 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// Elicit says who answers the upstream's elicitations; "" means
	// ElicitClientElseHitl.
	Elicit ElicitMode
	// ElicitTimeout is how long a person has to answer an elicitation
	// asked in hitl; 0 means DefaultElicitTimeout.
	ElicitTimeout time.Duration
	// ProgressInterval is how often a call waiting for a person reports
	// progress to a client that asked for it; 0 means
	// DefaultProgressInterval.
	ProgressInterval time.Duration
	// Logger logs what the gate decides (never arguments or answers);
	// nil discards.
	Logger *slog.Logger
}

// Gate reviews an MCP server's tool calls through a hitl.Service: the
// in-process engine (hitl serve --gate) or a remote server's client (hitl
// gate). One Gate serves any number of sessions.
type Gate struct {
	svc  hitl.Service
	opts Options
	log  *slog.Logger
}

// New returns a Gate asking through svc.
func New(svc hitl.Service, opts *Options) (*Gate, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Policy == nil {
		o.Policy = &Policy{}
	}
	if err := o.Policy.Check(); err != nil {
		return nil, err
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.ElicitTimeout <= 0 {
		o.ElicitTimeout = DefaultElicitTimeout
	}
	if o.ProgressInterval <= 0 {
		o.ProgressInterval = DefaultProgressInterval
	}
	if o.Elicit == "" {
		o.Elicit = ElicitClientElseHitl
	}
	if !o.Elicit.valid() {
		return nil, fmt.Errorf("elicit mode must be hitl, client or client-else-hitl; got %q", o.Elicit)
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Gate{svc: svc, opts: o, log: log}, nil
}

// Serve proxies one MCP session between a client's connection and the
// upstream server's until either side ends, then closes both. It returns
// nil when the client went away, and the upstream's failure otherwise.
func (g *Gate) Serve(ctx context.Context, client, upstream mcp.Connection) error {
	ctx, cancel := context.WithCancel(ctx)
	s := &session{
		g: g, client: client, upstream: upstream, ctx: ctx,
		server:    g.opts.Server,
		tools:     map[string]*toolInfo{},
		listing:   map[any]bool{},
		held:      map[any]context.CancelFunc{},
		eliciting: map[any]context.CancelFunc{},
		own:       map[string]chan *jsonrpc.Response{},
		calls:     map[any]json.RawMessage{},
	}
	errs := make(chan error, 2)
	go func() { errs <- s.fromClient() }()
	go func() { errs <- s.fromUpstream() }()
	err := <-errs
	cancel()
	client.Close()
	upstream.Close()
	<-errs
	s.wg.Wait()
	if errors.Is(err, errClientGone) {
		return nil
	}
	return err
}

// errClientGone ends a session whose client disconnected.
var errClientGone = errors.New("the MCP client disconnected")

// session is one client's session through the gate.
type session struct {
	g                *Gate
	client, upstream mcp.Connection
	ctx              context.Context
	wg               sync.WaitGroup

	mu          sync.Mutex
	server      string // the upstream's name
	clientName  string
	clientTitle string
	elicits     elicitSupport // what the client declared
	initID      any           // the client's initialize request, until answered
	tools       map[string]*toolInfo
	listing     map[any]bool                      // the client's tools/list requests awaiting their response
	held        map[any]context.CancelFunc        // gated tools/call requests under review, by id
	eliciting   map[any]context.CancelFunc        // the upstream's elicitations asked in hitl, by id
	own         map[string]chan *jsonrpc.Response // the gate's own requests to the upstream
	ownSeq      int
	calls       map[any]json.RawMessage // params of the tools/call requests relayed, by id
}

// toolInfo is what the upstream's tools/list said about a tool.
type toolInfo struct {
	Name        string       `json:"name"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
}

// fromClient relays the client's messages to the upstream, holding the
// gated calls.
func (s *session) fromClient() error {
	for {
		msg, err := s.client.Read(s.ctx)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) || s.ctx.Err() != nil {
				return errClientGone
			}
			return fmt.Errorf("read from the MCP client: %w", err)
		}
		if req, ok := msg.(*jsonrpc.Request); ok {
			if s.intercept(req) {
				continue
			}
			s.noteCall(req)
		}
		if err := s.upstream.Write(s.ctx, msg); err != nil {
			return fmt.Errorf("write to the upstream MCP server: %w", err)
		}
	}
}

// fromUpstream relays the upstream's messages to the client, noting the
// tools it lists and answering the elicitations hitl asks.
func (s *session) fromUpstream() error {
	for {
		msg, err := s.upstream.Read(s.ctx)
		if err != nil {
			if s.ctx.Err() != nil {
				return errClientGone
			}
			if errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
				return errors.New("the upstream MCP server closed the connection")
			}
			return fmt.Errorf("read from the upstream MCP server: %w", err)
		}
		switch m := msg.(type) {
		case *jsonrpc.Response:
			if s.ownResponse(m) || s.callResult(m) {
				continue
			}
			s.noteResponse(m)
		case *jsonrpc.Request:
			if s.interceptUpstream(m) {
				continue
			}
		}
		if err := s.client.Write(s.ctx, msg); err != nil {
			if s.ctx.Err() != nil {
				return errClientGone
			}
			return fmt.Errorf("write to the MCP client: %w", err)
		}
	}
}

// intercept handles a request from the client that the gate acts on,
// and reports whether it did so in place of relaying it.
func (s *session) intercept(req *jsonrpc.Request) bool {
	s.declareInMeta(req)
	switch req.Method {
	case "initialize":
		s.noteInitialize(req)
	case "tools/list":
		if req.IsCall() {
			s.mu.Lock()
			s.listing[req.ID.Raw()] = true
			s.mu.Unlock()
		}
	case "tools/call":
		if req.IsCall() {
			return s.callTool(req)
		}
	case "notifications/cancelled":
		return s.cancelHeld(req)
	}
	return false
}

// interceptUpstream handles a message from the upstream that the gate
// acts on, and reports whether it did so in place of relaying it.
func (s *session) interceptUpstream(req *jsonrpc.Request) bool {
	switch req.Method {
	case "elicitation/create":
		if req.IsCall() {
			return s.elicit(req)
		}
	case "notifications/cancelled":
		return s.cancelEliciting(req)
	}
	return false
}

// respond writes the response to a client's request.
func (s *session) respond(id jsonrpc.ID, result any) {
	res, err := newResponse(id, result)
	if err == nil {
		err = s.client.Write(s.ctx, res)
	}
	if err != nil && s.ctx.Err() == nil {
		s.g.log.Warn("mcp gate: cannot answer the client", "error", err)
	}
}

// cancelID returns the requestId a notifications/cancelled names.
func cancelID(req *jsonrpc.Request) (any, bool) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if decode(req.Params, &p) != nil || p.RequestID == nil {
		return nil, false
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil {
		return nil, false
	}
	return id.Raw(), true
}
