package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/ask"
	"github.com/hitl-sh/hitl/tools"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Claude Code's permission relay (see tools.ChannelCapability). With
// Options.Channel the server declares the channel capabilities, and each
// connection it serves with Run or Connect reads Claude Code's
// permission_request notifications off the wire (the SDK dispatches only
// the methods it knows) and asks a person in hitl: an action with the
// tool's name, its preview as text, approve or reject. An approve sends
// Claude Code "allow", a reject "deny". Anything else sends nothing, so
// the prompt stays at the terminal for the person there: hitl down, the
// question expired or cancelled, an answer that cannot be trusted.
//
// Claude Code tells the channel nothing when the prompt is answered at the
// terminal. So a question ends (cancelled, reason ReasonAnsweredElsewhere)
// when the same connection relays its next permission request, and every
// open question ends (reason ReasonSessionEnded) when the connection
// closes.

// Reasons a relayed question is cancelled with.
const (
	// ReasonAnsweredElsewhere: Claude Code relayed another prompt, so the
	// earlier one was answered at the terminal (or otherwise ended there).
	ReasonAnsweredElsewhere = "answered at the terminal: Claude Code has moved on to another permission prompt"
	// ReasonSessionEnded: the Claude Code session disconnected.
	ReasonSessionEnded = "the Claude Code session ended"
)

// DefaultChannelTimeout is how long a person has to answer a relayed
// prompt in hitl; after it the question expires and the prompt stays at
// the terminal.
const DefaultChannelTimeout = tools.DefaultReviewTimeout

// channelCancelTimeout bounds the cancel sent when a question ends.
const channelCancelTimeout = 5 * time.Second

// channelVersions are the protocol versions a channel serves: Claude Code
// does not relay to a connection that negotiated 2026-07-28 or later
// ("no unsolicited notification path").
func channelVersions() []string {
	var vs []string
	for _, v := range mcp.SupportedProtocolVersions() {
		if v < "2026-07-28" {
			vs = append(vs, v)
		}
	}
	return vs
}

// channelTransport wraps a transport so that its connection relays
// permission requests.
type channelTransport struct {
	mcp.Transport
	s   *Server
	ctx context.Context // the caller's, for the questions

	wg sync.WaitGroup // the relays' questions, until withdrawn
}

func (t *channelTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithCancelCause(context.WithoutCancel(t.ctx))
	return &channelConn{Connection: conn, t: t, ctx: rctx, cancel: cancel, id: uuid.NewString(), open: map[string]*relayed{}}, nil
}

// wait returns once every question the transport's connections asked has
// ended or been withdrawn.
func (t *channelTransport) wait() { t.wg.Wait() }

// channelConn is one Claude Code session's connection.
type channelConn struct {
	mcp.Connection
	t      *channelTransport
	ctx    context.Context // ends when the connection closes
	cancel context.CancelCauseFunc
	id     string // scopes request ids, unique only per session

	mu     sync.Mutex
	open   map[string]*relayed // by request id, lower case
	closed bool
}

// relayed is a question open in hitl for a prompt.
type relayed struct {
	cancel context.CancelCauseFunc
}

// errAnsweredElsewhere and errSessionEnded end a relayed question's wait.
var (
	errAnsweredElsewhere = errors.New(ReasonAnsweredElsewhere)
	errSessionEnded      = errors.New(ReasonSessionEnded)
)

// Read returns the next message for the SDK, relaying permission requests
// on the way.
func (c *channelConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return msg, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || req.ID.IsValid() || req.Method != tools.MethodChannelPermissionRequest {
			return msg, nil
		}
		c.request(req.Params)
	}
}

// Close ends the connection and withdraws its open questions.
func (c *channelConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cancel(errSessionEnded)
	return c.Connection.Close()
}

// request relays one permission request.
func (c *channelConn) request(params json.RawMessage) {
	log := c.t.s.log
	var r tools.ChannelPermissionRequest
	if err := json.Unmarshal(params, &r); err != nil || r.RequestID == "" || r.ToolName == "" {
		log.Warn("channel permission request ignored: malformed", "error", err)
		return
	}
	key := strings.ToLower(r.RequestID)
	ctx, cancel := context.WithCancelCause(c.ctx)
	c.mu.Lock()
	if _, dup := c.open[key]; dup || c.closed {
		c.mu.Unlock()
		cancel(nil)
		return
	}
	for id, q := range c.open {
		q.cancel(errAnsweredElsewhere)
		delete(c.open, id)
	}
	q := &relayed{cancel: cancel}
	c.open[key] = q
	c.t.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.t.wg.Done()
		defer func() {
			c.mu.Lock()
			if c.open[key] == q {
				delete(c.open, key)
			}
			c.mu.Unlock()
			cancel(nil)
		}()
		c.relay(ctx, r)
	}()
}

// relay asks the person about r and sends Claude Code their decision, if
// it is one.
func (c *channelConn) relay(ctx context.Context, r tools.ChannelPermissionRequest) {
	s := c.t.s
	start := time.Now()
	req, err := r.Request(s.agent, c.id, c.Connection.SessionID(), s.channelTimeout)
	if err != nil {
		s.log.Warn("channel permission request ignored", "error", err)
		return
	}
	in, err := c.ask(ctx, req)
	behavior := tools.ChannelBehavior(in, r.ToolName)
	attrs := []any{"tool", r.ToolName, "request_id", r.RequestID, "behavior", behavior, "duration_ms", time.Since(start).Milliseconds()}
	if in != nil {
		attrs = append(attrs, "interaction_id", in.ID, "status", in.Status)
	}
	level := slog.LevelInfo
	if err != nil {
		attrs = append(attrs, "error", err)
		if ctx.Err() == nil {
			level = slog.LevelWarn
		}
	}
	s.log.Log(ctx, level, "mcp channel permission request", attrs...)
	if behavior == "" || ctx.Err() != nil {
		return // the terminal decides (or has decided)
	}
	params, _ := json.Marshal(tools.ChannelPermission{RequestID: r.RequestID, Behavior: behavior})
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), channelCancelTimeout)
	defer cancel()
	if err := c.Connection.Write(wctx, &jsonrpc.Request{Method: tools.MethodChannelPermission, Params: params}); err != nil {
		s.log.Warn("channel permission answer not sent", "request_id", r.RequestID, "error", err)
	}
}

// ask creates the question and waits until it ends or ctx does; when ctx
// ends first, the question is cancelled with ctx's cause as the reason.
// It returns the question as it ended (nil when it could not be asked),
// and never an interaction other than the one it created.
func (c *channelConn) ask(ctx context.Context, req hitl.CreateRequest) (*hitl.Interaction, error) {
	svc := c.t.s.svc
	in, err := ask.Create(ctx, svc, req)
	if err != nil {
		return nil, err
	}
	for !in.Status.Terminal() {
		got, err := svc.Wait(ctx, in.ID)
		if ctx.Err() != nil {
			return c.withdraw(ctx, in), context.Cause(ctx)
		}
		if err != nil {
			return nil, err
		}
		if got == nil || got.ID != in.ID {
			return nil, hitl.Errorf(hitl.EINTERNAL, "the hitl server answered about another interaction than %s", in.ID)
		}
		in = got
	}
	return in, nil
}

// withdraw cancels in, giving ctx's cause as the reason, and returns it
// as it ended (answered, if an answer won the race).
func (c *channelConn) withdraw(ctx context.Context, in *hitl.Interaction) *hitl.Interaction {
	svc := c.t.s.svc
	reason := ReasonSessionEnded
	if cause := context.Cause(ctx); cause != nil && slices.Contains([]string{ReasonAnsweredElsewhere, ReasonSessionEnded}, cause.Error()) {
		reason = cause.Error()
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), channelCancelTimeout)
	defer cancel()
	out, err := svc.Cancel(cctx, in.ID, reason)
	if err == nil {
		return out
	}
	if got, gerr := svc.Get(cctx, in.ID); gerr == nil && got.ID == in.ID {
		return got
	}
	c.t.s.log.Warn("channel question not withdrawn", "interaction_id", in.ID, "error", err)
	return in
}
