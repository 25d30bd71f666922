// Package email is hitl's email channel. A question still unanswered
// after a delay (120 seconds unless configured otherwise) is mailed to the
// people it targets (or to a default list, for questions that target no
// one in particular): plain text and HTML, with one link per option for
// approval and single choice, else a link to the card in the inbox.
//
// Links are scanner-safe: each is signed, bound to its recipient, expires
// with the question and records one answer; a GET only shows a
// confirmation page, whose POST answers (through the engine, on the
// channel "email"). Mail is scheduled as durable rows in the store
// (hitl.NotificationStore), sent once across replicas.
package email

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/internal/worker"
	"github.com/hitl-sh/hitl/secret"
)

const (
	// idleRecheck bounds how long the worker sleeps, so that it notices
	// rows and configuration changes made by another replica.
	idleRecheck = 30 * time.Second
	// configRecheck is how often the stored configuration is read again.
	configRecheck = 30 * time.Second
	// retryAfterError is how long the worker waits after a store error.
	retryAfterError = 5 * time.Second
	// lease is how long a claimed row is held before another replica may
	// take it over (its holder died).
	lease = 2 * time.Minute
	// claimBatch is how many rows are claimed at once.
	claimBatch = 20
	// scheduleBatch is how many unscheduled interactions a sweep reads.
	scheduleBatch = 200
	// maxAttempts is how many times a mail is tried before it is given up.
	maxAttempts = 6
	// closeGrace is how long Close lets a mail being sent finish.
	closeGrace = 5 * time.Second
)

// backoff is the wait before each retry.
var backoff = []time.Duration{30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour}

// Options configure a Service. The zero value is usable.
type Options struct {
	// Logger receives operational logs; nil discards them. Passwords,
	// link tokens and answer values are never logged.
	Logger *slog.Logger
	// Now is the clock; nil means the broker's.
	Now func() time.Time
	// Settings are the flags and environment variables, which win over
	// the stored configuration.
	Settings Settings
	// Cipher seals the SMTP URL and the link key at rest. Without one the
	// SMTP URL can only come from Settings, and the link key lives in
	// memory: links stop working when the server restarts.
	Cipher *secret.Cipher
	// PublicURL is where people reach hitl, for the links in mail.
	PublicURL string
	// Identities finds people's addresses and groups; nil means no users
	// (only the default list is mailed).
	Identities hitl.Identities
	// TLSConfig, when set, replaces the TLS settings for the SMTP server.
	TLSConfig *tls.Config
}

// Service is the email channel over one broker. Create it with New, then
// Start it; Close it before the store.
type Service struct {
	b         *broker.Broker
	store     hitl.NotificationStore
	ids       hitl.Identities
	log       *slog.Logger
	now       func() time.Time
	env       Settings
	cipher    *secret.Cipher
	publicURL string
	tls       *tls.Config
	pages     *pages

	ctx    context.Context // ends with Close: in-flight work stops
	cancel context.CancelFunc
	intake *worker.Intake[*hitl.Interaction] // created interactions for the worker
	closed chan struct{}
	once   sync.Once
	wg     sync.WaitGroup

	mu       sync.Mutex
	cfg      Config
	linkKey  []byte
	loadedAt time.Time
}

// New returns the email channel over b, keeping its rows in store.
func New(b *broker.Broker, store hitl.NotificationStore, opts *Options) *Service {
	if opts == nil {
		opts = &Options{}
	}
	s := &Service{
		b: b, store: store, ids: opts.Identities, log: opts.Logger, now: opts.Now,
		env: opts.Settings, cipher: opts.Cipher, publicURL: opts.PublicURL, tls: opts.TLSConfig,
		intake: worker.NewIntake[*hitl.Interaction](), closed: make(chan struct{}),
	}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if s.now == nil {
		s.now = b.Now
	}
	s.pages = newPages()
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// Start reads the configuration and the link key (made on first start),
// and starts the worker, which first schedules what was missed while the
// server was down.
func (s *Service) Start(ctx context.Context) error {
	if err := s.env.Validate(); err != nil {
		return fmt.Errorf("email settings: %s", hitl.ErrorMessage(err))
	}
	key, err := s.initLinkKey(ctx)
	if err != nil {
		return fmt.Errorf("start email: %w", err)
	}
	cfg, err := s.effective(ctx)
	if err != nil {
		return fmt.Errorf("start email: %w", err)
	}
	if err := cfg.validate(); err != nil {
		s.log.Error("email configuration is not usable; email stays off until it is fixed", "error", hitl.ErrorMessage(err))
		cfg.Enabled = false
	}
	s.mu.Lock()
	s.cfg, s.linkKey, s.loadedAt = cfg, key, s.now()
	s.mu.Unlock()
	s.intake.Sweep()
	s.b.Observe(s.observe)
	s.b.OnEscalation(s.escalated)
	s.wg.Go(s.run)
	return nil
}

// Close stops the worker. Rows in flight are picked up again after their
// lease, here or on another replica.
func (s *Service) Close() error {
	s.once.Do(func() {
		s.intake.Close()
		close(s.closed)
		worker.Stop(&s.wg, closeGrace, s.cancel)
	})
	s.wg.Wait()
	return nil
}

// config returns the configuration in effect and the link key.
func (s *Service) config() (Config, []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg, s.linkKey
}

// observe is the broker's observer: new pending interactions are queued
// for the worker. It never blocks.
func (s *Service) observe(ev *hitl.Event) {
	in, ok := worker.CreatedPending(ev)
	if !ok {
		return
	}
	s.mu.Lock()
	on := s.cfg.usable()
	s.mu.Unlock()
	// While email is off nothing is queued: turning it on sweeps the
	// store for what is pending.
	if on {
		s.intake.Add(in)
	}
}

// errNoCipher refuses to store a secret without a key to seal it.
var errNoCipher = errors.New("no secret key")
