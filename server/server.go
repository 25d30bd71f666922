// Package server is hitl's HTTP surface: the native JSON API, the
// compatibility routes of the AI-Parrot HITL and human_feedback contracts,
// live streams over WebSocket and SSE, health and metrics, over one
// broker; and, given through Options, the Slack channel's routes and MCP.
package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/server/internal/park"
	"github.com/hitl-sh/hitl/server/internal/wshub"
	"github.com/hitl-sh/hitl/ui"
	"github.com/prometheus/client_golang/prometheus"
)

// Options configure a Server. The zero value is usable.
type Options struct {
	// UndoWindow is how long the web inbox holds a person's decision,
	// with Undo, before it sends it (the agent is told nothing
	// meanwhile); 0 sends at once.
	UndoWindow time.Duration
	// Logger receives request and error logs; nil discards them. Bodies
	// (and so answer values) are never logged.
	Logger *slog.Logger
	// Registry receives the server's Prometheus metrics; nil means a new
	// registry with the Go and process collectors.
	Registry *prometheus.Registry
	// Version is reported by /healthz.
	Version string
	// Auth configures authentication (see AuthOptions); the zero value
	// runs without login until the first user or token exists.
	Auth AuthOptions
	// Slack, when set, is the Slack channel (the slack package's
	// Service): the server serves its configuration API, for admins,
	// and Slack's own requests, which Slack signs.
	Slack SlackChannel
	// MCP, when set, serves MCP over streamable HTTP at /mcp (the
	// mcpserver package's Handler), for API tokens.
	MCP http.Handler
	// MCPGates, when set, serves gated MCP servers over streamable HTTP
	// at /mcp/gate/NAME (the mcpgate package's Handler), for API tokens.
	MCPGates http.Handler
	// Webhooks, when set, serves the webhooks' API and lets agents give
	// a callback_url.
	Webhooks Webhooks
	// Email, when set, is the email channel (the email package's
	// Service): the server serves its configuration API, for admins, and
	// the pages the links in mail lead to, whose token is their
	// credential.
	Email EmailChannel
	// Push, when set, is the Web Push channel (the webpush package's
	// Service): the server serves its key and people's subscriptions.
	Push PushChannel
	// Receipts, when set, publishes the keys that approved actions'
	// receipts are signed with and verifies receipts.
	Receipts Receipts
	// EmbedOrigins are the origins (scheme://host[:port]) of the pages
	// that may embed the <hitl-prompt> element: they may load its script,
	// open the live channel and answer through it, and nothing else (see
	// embedCORS). None by default.
	EmbedOrigins []string
	// WebSocketQueue is how many messages a WebSocket may have waiting to
	// be sent before it is closed as too slow (1013, try again later);
	// 0 means 1024.
	WebSocketQueue int
}

// Server serves hitl over HTTP. Create it with New and serve Handler().
type Server struct {
	undo    time.Duration // Options.UndoWindow
	broker  *broker.Broker
	log     *slog.Logger
	version string
	metrics *metrics
	mux     *routeMux
	auth    *authenticator
	slack   SlackChannel
	mcp     http.Handler
	gates   http.Handler
	// webhooks, when set, sends webhooks (webhooks.go).
	webhooks Webhooks
	email    EmailChannel
	push     PushChannel
	receipts Receipts
	hub      *wshub.Hub
	// embedOrigins may embed <hitl-prompt> (embed.go).
	embedOrigins embedOrigins
	replays      replayCache
	// replayReads shares the replay reads of connections that arrive
	// together.
	replayReads replayReads
	parking     atomic.Pointer[park.Listener]
	// held counts the long-polls waiting in their handlers; past its
	// limit (heldWaitsMax, a field for tests) parkable ones are parked.
	held heldWaits
	// parkSweep is how often parked long-polls are checked for agents
	// that hung up (a field for tests).
	parkSweep time.Duration
	// bodyTimeout bounds the arrival of a request body (a field for
	// tests; bodyReadTimeout).
	bodyTimeout time.Duration
}

// New returns a server over b.
func New(b *broker.Broker, opts *Options) *Server {
	if opts == nil {
		opts = &Options{}
	}
	s := &Server{
		undo:     opts.UndoWindow,
		broker:   b,
		log:      opts.Logger,
		version:  opts.Version,
		mux:      newRouteMux(),
		slack:    opts.Slack,
		mcp:      opts.MCP,
		gates:    opts.MCPGates,
		webhooks: opts.Webhooks,
		email:    opts.Email,
		push:     opts.Push,
		receipts: opts.Receipts,

		held:        heldWaits{limit: heldWaitsMax},
		parkSweep:   park.SweepInterval,
		bodyTimeout: bodyReadTimeout,
	}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	var bad []string
	s.embedOrigins, bad = newEmbedOrigins(opts.EmbedOrigins)
	for _, o := range bad {
		s.log.Error("embed origin is not scheme://host[:port]; ignored", "origin", o)
	}
	s.metrics = newMetrics(opts.Registry, b, s.held.count)
	s.auth = newAuthenticator(opts.Auth, s.log)
	s.hub = wshub.New(b, wsEncoder{}, &wshub.Options{
		Queue:      opts.WebSocketQueue,
		Recheck:    s.auth.recheck,
		StillValid: s.stillValid,
		Gauge:      s.metrics.streamsOpen.WithLabelValues("ws"),
		Logger:     s.log,
	})
	s.routes()
	return s
}

// routes registers every route: here, or in the channels' and sign-in
// functions it calls (slackRoutes, authRoutes, webhookRoutes, emailRoutes,
// pushRoutes).
func (s *Server) routes() {
	// Native API.
	s.mux.HandleFunc("POST /api/v1/interactions", s.handle(s.handleCreate))
	s.mux.HandleFunc("GET /api/v1/interactions", s.handle(s.handleList))
	s.mux.HandleFunc("GET /api/v1/interactions/counts", s.handle(s.handleCounts))
	s.mux.HandleFunc("GET /api/v1/interactions/{id}", s.handle(s.handleGet))
	s.mux.HandleFunc("GET /api/v1/interactions/{id}/wait", s.handle(s.handleWait))
	s.mux.HandleFunc("POST /api/v1/interactions/{id}/respond", s.handle(s.handleRespond))
	s.mux.HandleFunc("POST /api/v1/interactions/{id}/cancel", s.handle(s.handleCancel))
	s.mux.HandleFunc("POST /api/v1/interactions/{id}/claim", s.handle(s.handleClaim))
	s.mux.HandleFunc("DELETE /api/v1/interactions/{id}/claim", s.handle(s.handleRelease))
	s.mux.HandleFunc("GET /api/v1/interactions/{id}/events", s.handle(s.handleTimeline))

	// Rules that decide actions without a person.
	s.mux.HandleFunc("POST /api/v1/rules", s.handle(s.handleCreateRule))
	s.mux.HandleFunc("GET /api/v1/rules", s.handle(s.handleListRules))
	s.mux.HandleFunc("GET /api/v1/rules/{id}", s.handle(s.handleGetRule))
	s.mux.HandleFunc("DELETE /api/v1/rules/{id}", s.handle(s.handleRevokeRule))
	s.mux.HandleFunc("POST "+claudeCodeHookPath, s.handle(s.handleClaudeCodeHook)) // Claude Code's HTTP hook

	// Live streams.
	s.mux.HandleFunc("GET /ws", s.handle(s.handleWebSocket))
	// The name the AI-Parrot HITL contract's chat connects to.
	s.mux.HandleFunc("GET /ws/userinfo", s.handle(s.handleWebSocket))
	s.mux.HandleFunc("GET /api/v1/events", s.handle(s.handleEvents))

	// The human_feedback contract's endpoints.
	s.mux.HandleFunc("POST /api/human-feedback/submit", s.handle(s.handleFeedbackSubmit))
	s.mux.HandleFunc("GET /api/human-feedback/pending", s.handle(s.handleFeedbackPending))

	// The Slack channel, when it runs (slackRoutes).
	if s.slack != nil {
		s.slackRoutes()
	}

	// Webhooks and their deliveries (admins).
	s.webhookRoutes()

	// Embed tokens for the <hitl-prompt> element (admins).
	s.embedTokenRoutes()

	// Email configuration (admins) and the links in mail, when the
	// channel runs (email.go).
	if s.email != nil {
		s.emailRoutes()
	}

	// Web Push: the key and the signed-in person's subscriptions, when
	// the channel runs (push.go).
	if s.push != nil {
		s.pushRoutes()
	}

	// Receipts: the public keys, verification, rotation (receipts.go).
	if s.receipts != nil {
		s.receiptRoutes()
	}

	// The AI-Parrot HITL contract's respond endpoint.
	s.mux.HandleFunc("POST /api/v1/agents/hitl/respond", s.handle(s.handleHITLRespond))

	// LangChain Agent Inbox's interrupts, asked as actions (agentinbox.go).
	s.mux.HandleFunc("POST /api/v1/agent-inbox/interrupts", s.handle(s.handleInboxCreate))
	s.mux.HandleFunc("GET /api/v1/agent-inbox/interrupts/{ids}", s.handle(s.handleInboxGet))

	// MCP over streamable HTTP: the ask_human and human_feedback tools,
	// when given.
	if s.mcp != nil {
		s.mux.Handle("/mcp", s.mcp)
	}
	// Gated MCP servers (hitl serve --gate), when given.
	if s.gates != nil {
		s.mux.Handle("/mcp/gate/", s.gates)
	}

	// Authentication: the API the inbox uses, and a plain login page.
	s.authRoutes()

	// Operations.
	s.mux.HandleFunc("GET /healthz", s.handle(s.handleHealth))
	s.mux.HandleFunc("GET /readyz", s.handle(s.handleReady))
	s.mux.Handle("GET /metrics", s.metrics.handler())
	s.mux.HandleFunc("GET "+openAPIPath, s.handle(s.handleOpenAPI))

	// The web inbox: index.html at / (and at /i/{id}, its detail view of
	// one interaction) and content-hashed assets.
	inbox := ui.Handler()
	s.mux.Handle("GET /{$}", inbox)
	s.mux.Handle("GET /assets/", inbox)
	s.mux.Handle("GET /i/{id}", inbox) // the detail view of one interaction
	s.mux.Handle("GET "+ui.ServiceWorkerPath, inbox)
	// The <hitl-prompt> element, for other sites' pages.
	s.mux.Handle("GET "+ui.EmbedScriptPath, inbox)
}

// slackRoutes registers the Slack channel's configuration (admins) and
// Slack's own requests, signed by Slack, not authenticated.
func (s *Server) slackRoutes() {
	s.mux.HandleFunc("GET /api/human-feedback/slack/config", s.handle(s.handleSlackConfig))
	s.mux.HandleFunc("POST /api/human-feedback/slack/config", s.handle(s.handleSlackSetConfig))
	s.mux.HandleFunc("POST /api/human-feedback/slack/test", s.handle(s.handleSlackTest))
	s.mux.HandleSigned("POST /slack/events", s.slack.EventsHandler())
	s.mux.HandleSigned("POST /slack/interactivity", s.slack.InteractivityHandler())
}

// authRoutes registers sign-in: the API the inbox uses, and a plain
// login page.
func (s *Server) authRoutes() {
	s.mux.HandleFunc("POST /api/v1/auth/login", s.handle(s.handleLogin))
	s.mux.HandleFunc("POST /api/v1/auth/logout", s.handle(s.handleLogout))
	s.mux.HandleFunc("GET /api/v1/auth/me", s.handle(s.handleMe))
	s.mux.HandleFunc("GET /login", s.handleLoginPage)
	s.mux.HandleFunc("POST /login", s.handleLoginForm)
	s.mux.HandleFunc("POST /logout", s.handleLogoutForm)
	s.mux.HandleFunc("GET "+loginCSSPath, s.handleLoginCSS)
	s.mux.HandleFunc("GET "+authMethodsPath, s.handle(s.handleAuthMethods))
	s.signOnRoutes()
}

// Listener wraps l, the listener the server's Handler is served on, so
// that long-polls (GET /api/v1/interactions/{id}/wait) beyond the first
// few hundred (heldWaitsMax) wait without a goroutine or buffers each:
// their connections are taken from net/http while they wait and come back
// through the returned listener for their next request. Serve on the
// returned listener (plain HTTP/1.x; TLS and HTTP/2 requests wait the
// ordinary way). Without it, every long-poll holds a goroutine and
// net/http's buffers, about 25 KiB. A connection given back is a new one
// to http.Server: the agent's next request on it must start within
// ReadHeaderTimeout rather than IdleTimeout (clients that poll again at
// once, as the hitl client does, never notice).
func (s *Server) Listener(l net.Listener) net.Listener {
	pl := park.NewListener(l, s.metrics.parked, s.parkSweep)
	s.parking.Store(pl)
	return pl
}

// Shutdown waits until the long-polls parked through Listener have been
// answered, or ctx ends. Close the broker first: it answers them at once
// (with the interaction as it stands). Call it after http.Server.Shutdown,
// which does not wait for them.
func (s *Server) Shutdown(ctx context.Context) error {
	if l := s.parking.Load(); l != nil {
		return l.WaitParked(ctx)
	}
	return nil
}

// WebSockets returns how many WebSockets are open.
func (s *Server) WebSockets() int { return s.hub.Open() }

// Handler returns the server's HTTP handler with its middleware.
//
// For a graceful shutdown, close the broker first: long-polls then return
// the interaction as it stands (pending) and streams close, so
// http.Server.Shutdown does not wait on them.
func (s *Server) Handler() http.Handler {
	// Browsers may send "simple" cross-origin POSTs without a preflight; a
	// web page must never answer a question or ask one on the user's behalf.
	csrf := http.NewCrossOriginProtection()
	csrf.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, hitl.Errorf(hitl.EFORBIDDEN, "cross-origin request refused"))
	}))
	// The embed origins' pages may answer through the prompt's routes
	// alone: embedCORS refuses them every other route before this.
	for o := range s.embedOrigins {
		_ = csrf.AddTrustedOrigin(o)
	}
	return grownStack(s.recoverPanics(s.logRequests(s.bodyDeadline(s.signedFirst(s.embedCORS(csrf.Handler(s.identify(http.HandlerFunc(s.route)))))))))
}

// signedFirst serves the requests of signed routes (see
// routeMux.HandleSigned) with their own handler, and every other request
// with next: authentication and cross-origin protection are not for
// requests that a service such as Slack signs.
func (s *Server) signedFirst(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := s.mux.signedRoute(r); h != nil {
			h.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
