package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/internal/gcheadroom"
	"github.com/hitl-sh/hitl/mcpserver"
	"github.com/hitl-sh/hitl/postgres"
	"github.com/hitl-sh/hitl/risk"
	"github.com/hitl-sh/hitl/server"
	"github.com/hitl-sh/hitl/sqlite"
)

// Defaults for hitl serve.
const (
	defaultAddr     = "127.0.0.1:7878"
	defaultDB       = "./hitl.db"
	shutdownTimeout = 10 * time.Second
	// Under load, garbage collections come no more often than gcEvery
	// while the heap grows by at most gcHeadroom between them (or by what
	// GOGC=100 allows, when that is more): gcheadroom.Keep. GOGC in the
	// environment overrides both.
	gcHeadroom = 32 << 20
	gcEvery    = 250 * time.Millisecond
)

// envOr returns the environment variable key, or def when it is unset or
// empty.
func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// runServe runs the server until ctx ends, then shuts down gracefully.
// Exit codes: 0 after a clean shutdown, 1 when it cannot start or fails,
// 2 for bad flags.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("serve", "hitl serve [flags]",
		"Runs the hitl server: the HTTP API, live streams and health checks, over a\n"+
			"SQLite database, or a PostgreSQL one that several replicas share (--db\n"+
			"postgres://...). SIGINT or SIGTERM shuts it down gracefully: waiting agents\n"+
			"are released (they poll again once the server is back) and requests in\n"+
			"flight finish. Every flag defaults to its HITL_* environment variable.", stderr)
	addr := fs.String("addr", envOr("HITL_ADDR", defaultAddr), "`host:port` to listen on (HITL_ADDR)")
	db := fs.String("db", envOr("HITL_DB", defaultDB), "SQLite database `file`, created if missing, or a postgres:// URL (HITL_DB)")
	logFormat := fs.String("log-format", envOr("HITL_LOG_FORMAT", "text"), "log format: text or json (HITL_LOG_FORMAT)")
	logLevel := fs.String("log-level", envOr("HITL_LOG_LEVEL", "info"), "log level: debug, info, warn or error (HITL_LOG_LEVEL)")
	retentionFlag := fs.String("retention", envOr("HITL_RETENTION", defaultRetention), "keep ended interactions for this `duration` (90d, 36h) from when they\nended, then purge them with their events, every hour; 0 keeps everything\n(HITL_RETENTION)")
	claimTTLFlag := fs.String("claim-ttl", envOr("HITL_CLAIM_TTL", hitl.DefaultClaimTTL.String()), "how long a claim on a question holds when the claimer names no time\n(a `duration` such as 15m; at most 24h) (HITL_CLAIM_TTL)")
	undoFlag := fs.String("undo-window", envOr("HITL_UNDO_WINDOW", defaultUndoWindow.String()), "how long the web inbox holds a decision, with Undo, before it sends it\n(a `duration`; the agent is told nothing meanwhile; 0 sends at once)\n(HITL_UNDO_WINDOW)")
	escalationFlag := fs.String("escalation", envOr("HITL_ESCALATION", ""), "default escalation `JSON` of questions that name none, such as\n[{\"after\":\"10m\",\"remind\":true}] (HITL_ESCALATION)")
	var riskPatterns []risk.Pattern
	riskPattern := func(s string) error {
		p, err := risk.ParsePattern(s)
		if err == nil {
			riskPatterns = append(riskPatterns, p)
		}
		return err
	}
	fs.Func("risk-pattern", "mark actions whose command (or arguments) match this `regexp` as risky,\nbesides the built-in checks; \"REGEXP => why\" says why, such as\n\"pulumi (up|destroy) => changes cloud infrastructure\"; repeatable;\none a line in the environment variable (HITL_RISK_PATTERNS)", riskPattern)
	riskFile := fs.String("risk-patterns-file", envOr("HITL_RISK_PATTERNS_FILE", ""), "read more risk patterns from this `file`: one \"REGEXP => why\" a line, as\n--risk-pattern takes them, # starting a comment; a bad line stops the\nserver from starting (HITL_RISK_PATTERNS_FILE)")
	receiptTTLFlag := fs.String("receipt-ttl", envOr("HITL_RECEIPT_TTL", hitl.DefaultReceiptTTL.String()), "how long the signed receipt of an approved action is valid from its\napproval (a `duration` such as 1h; at most 168h) (HITL_RECEIPT_TTL)")
	auth := authFlags(fs)
	auth.signOn = signOnFlags(fs)
	ch := channelFlags{slack: slackFlags(fs), webhook: webhookFlags(fs), email: emailFlags(fs), push: pushFlags(fs)}
	for _, line := range strings.Split(os.Getenv("HITL_RISK_PATTERNS"), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if err := riskPattern(line); err != nil {
			fmt.Fprintf(stderr, "hitl serve: HITL_RISK_PATTERNS: %v\n", err)
			return 2
		}
	}
	gates := gateFlags(fs)
	if code, ok := parse(fs, args, 2); !ok {
		return code
	}
	if *riskFile != "" {
		ps, err := risk.ReadPatternsFile(*riskFile)
		if err != nil {
			fmt.Fprintf(stderr, "hitl serve: --risk-patterns-file: %v\n", err)
			return 2
		}
		riskPatterns = append(riskPatterns, ps...)
	}
	defer gcheadroom.Keep(gcHeadroom, gcEvery)()
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hitl serve: unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return 2
	}
	log, err := newLogger(stderr, *logFormat, *logLevel)
	var retention time.Duration
	if err == nil {
		retention, err = parseAge("--retention", *retentionFlag)
	}
	var claimTTL time.Duration
	if err == nil {
		claimTTL, err = parseClaimTTL(*claimTTLFlag)
	}
	var receiptTTL time.Duration
	if err == nil {
		receiptTTL, err = parseReceiptTTL(*receiptTTLFlag)
	}
	var escalation []hitl.EscalationStep
	if err == nil && *escalationFlag != "" {
		if escalation, err = hitl.ParseEscalation(*escalationFlag); err != nil {
			err = fmt.Errorf("--escalation: %w", err)
		}
	}
	var undo time.Duration
	if err == nil {
		undo, err = parseUndoWindow(*undoFlag)
	}
	if err == nil {
		err = auth.check()
	}
	if err == nil {
		err = auth.signOn.check()
	}
	if err == nil {
		err = ch.check()
	}
	if err == nil {
		err = gates.check()
	}
	if err != nil {
		fmt.Fprintf(stderr, "hitl serve: %v\n", err)
		return 2
	}
	engine := &broker.Options{Logger: log, Retention: retention, ClaimTTL: claimTTL, DefaultEscalation: escalation, Risk: risk.New(riskPatterns)}
	if err := serve(ctx, log, *addr, *db, engine, receiptTTL, undo, auth, ch, gates, stderr); err != nil {
		fmt.Fprintf(stderr, "hitl serve: %v\n", err)
		return 1
	}
	return 0
}

// defaultUndoWindow is how long the web inbox holds a decision, with
// Undo, unless --undo-window says otherwise.
const defaultUndoWindow = 5 * time.Second

// parseUndoWindow reads --undo-window: a duration from 0 (off) to a
// minute.
func parseUndoWindow(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if s == "0" {
		d, err = 0, nil
	}
	if err != nil || d < 0 || d > time.Minute {
		return 0, fmt.Errorf("--undo-window must be a duration from 0 (off) to 1m, such as 5s; got %q", s)
	}
	return d, nil
}

// parseClaimTTL reads --claim-ttl: a positive duration of at most
// hitl.MaxClaimTTL.
func parseClaimTTL(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d <= 0 || d > hitl.MaxClaimTTL {
		return 0, fmt.Errorf("--claim-ttl must be a duration between 1s and %s, such as 15m; got %q", hitl.MaxClaimTTL, s)
	}
	return d, nil
}

// serve listens on addr over the database db (see openStore) until ctx
// ends, with the engine configured by engine (retention, claims) and
// approved actions' receipts valid for receiptTTL; undo is the web
// inbox's undo window; auth decides who may call it (see
// authConfig.options); gates are the MCP servers it fronts at
// /mcp/gate/NAME (their commands' stderr: stderr).
func serve(ctx context.Context, log *slog.Logger, addr, db string, engine *broker.Options, receiptTTL, undo time.Duration, auth *authConfig, ch channelFlags, gates *gateConfig, stderr io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("cannot listen on %s: the address is already in use (is another hitl running? choose another with --addr)", addr)
		}
		return fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	defer ln.Close() // in case Serve never takes it over

	store, err := openStore(ctx, log, db, true)
	if errors.Is(err, sqlite.ErrInUse) {
		return fmt.Errorf("cannot open database: another hitl serve is using %s (one server per SQLite file; several replicas need PostgreSQL)", db)
	} else if err != nil {
		return fmt.Errorf("cannot open database: %w", err)
	}
	authOpts, err := auth.options(ctx, log, ln.Addr(), store, db, ch.slack)
	if err != nil {
		store.Close()
		return err
	}
	receipts, err := startReceipts(ctx, log, store, ch.slack, db, receiptTTL, ln.Addr())
	if err != nil {
		store.Close()
		return err
	}
	engine.Receipts = receipts
	b := broker.New(store, engine)
	if err := b.Start(ctx); err != nil {
		store.Close()
		return err
	}
	chans, err := startChannels(ctx, log, b, store, ch, db, ln.Addr())
	if err != nil {
		b.Close()
		store.Close()
		return err
	}
	taskRetention := engine.Retention
	if taskRetention == 0 {
		taskRetention = mcpserver.KeepForever
	}
	// The MCP tools tell the agent the decision and never a receipt: they
	// need none signed. The gate (below) hands approved calls their receipt.
	mcp := mcpserver.New(b.Unreceipted(), &mcpserver.Options{Logger: log, Version: buildVersion(), TaskRetention: taskRetention})
	opts := &server.Options{Slack: chans.slack, Email: chans.email, Push: chans.push, MCP: mcp.Handler(), Webhooks: chans.hooks, Receipts: receipts, Logger: log, Version: buildVersion(), Auth: authOpts, EmbedOrigins: auth.embedOrigins, UndoWindow: undo}
	gated, err := gates.handler(b, stderr, log)
	if err != nil {
		chans.close()
		b.Close()
		store.Close()
		return err
	}
	if gated != nil {
		defer gated.Close()
		opts.MCPGates = gated
	}
	srv := server.New(b, opts)
	hs := &http.Server{
		Handler:           srv.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// No WriteTimeout: long-polls and streams outlive any fixed bound.
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(srv.Listener(ln)) }()
	log.Info("hitl listening", "url", listenURL(ln.Addr()), "db", redactDB(db), "version", buildVersion(), "retention", retentionText(engine.Retention))

	var serveErr error
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case serveErr = <-served:
		log.Error("server failed", "error", serveErr)
	}

	// Broker first: long-polls return the interaction as it stands and
	// streams close, so Shutdown does not wait on them.
	b.Close()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		log.Warn("requests still running at shutdown were cut off", "error", err)
		hs.Close()
	}
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("long-polls still being answered at shutdown were cut off", "error", err)
	}
	chans.close() // before the store: in-flight Slack calls may still record events
	if err := store.Close(); err != nil {
		log.Error("close database", "error", err)
		if serveErr == nil {
			serveErr = err
		}
	}
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	log.Info("stopped")
	return nil
}

// isPostgres reports whether db names a PostgreSQL database (a postgres:
// or postgresql: URL) rather than a SQLite file.
func isPostgres(db string) bool {
	scheme, _, ok := strings.Cut(db, ":")
	return ok && (scheme == "postgres" || scheme == "postgresql")
}

// openStore opens the database db: PostgreSQL for a postgres:// URL (its
// schema migrated under an advisory lock, so replicas may start together),
// otherwise the SQLite file at that path, created if missing. A server's
// SQLite file is its alone (sqlite.Options.Exclusive); the user and token
// commands may open it beside the server.
func openStore(ctx context.Context, log *slog.Logger, db string, server bool) (hitl.Store, error) {
	if isPostgres(db) {
		return postgres.Open(ctx, db, &postgres.Options{Logger: log})
	}
	return sqlite.Open(db, &sqlite.Options{Logger: log, Exclusive: server})
}

// redactDB returns db fit for a log: a URL's password is masked.
func redactDB(db string) string {
	if !isPostgres(db) {
		return db
	}
	u, err := url.Parse(db)
	if err != nil {
		return "postgres://…" // unparseable; it may hold a password
	}
	return u.Redacted()
}

// listenURL is the URL to print for a listening address: an unspecified
// host (":7878", "0.0.0.0") is shown as localhost.
func listenURL(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "http://" + a.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// newLogger returns a logger writing to w in the given format and level.
func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level must be debug, info, warn or error; got %q", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json; got %q", format)
}

// retentionText says how long ended interactions are kept, for the log.
func retentionText(d time.Duration) string {
	switch {
	case d == 0:
		return "forever"
	case d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return d.String()
}
