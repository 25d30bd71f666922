// Package webpush is hitl's Web Push channel. A browser subscribes (the
// Push API's PushSubscription, for the person signed in); when a question
// is created for that person (a target, or a member of a targeted group;
// for questions that target no one, those who opted in), the browser is
// sent a short encrypted message at once (RFC 8291 aes128gcm, signed for
// the push service with a VAPID JWT, RFC 8292), which the inbox's service
// worker shows as a notification.
//
// Each push is a durable row in the store (hitl.NotificationStore, channel
// "push"), sent once across replicas and retried with backoff when the
// push service fails; a subscription the push service says is gone (404,
// 410) is deleted. The VAPID key pair is made on first start and stored
// sealed, so that every replica signs with it and subscriptions outlive
// restarts.
package webpush

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/internal/worker"
	"github.com/hitl-sh/hitl/secret"
	"github.com/hitl-sh/hitl/webhook"
)

const (
	// idleRecheck bounds how long the worker sleeps, so that it notices
	// rows another replica scheduled.
	idleRecheck = 30 * time.Second
	// retryAfterError is how long the worker waits after a store error.
	retryAfterError = 5 * time.Second
	// lease is how long a claimed row is held before another replica may
	// take it over (its holder died).
	lease = time.Minute
	// claimBatch is how many rows are claimed at once.
	claimBatch = 50
	// scheduleBatch is how many unscheduled interactions a sweep reads.
	scheduleBatch = 200
	// maxAttempts is how many times a push is tried before it is given up.
	maxAttempts = 8
	// defaultRetryBase is the first retry's wait; each next one doubles,
	// up to maxRetryDelay.
	defaultRetryBase = 10 * time.Second
	maxRetryDelay    = 30 * time.Minute
	// sendTimeout bounds one request to a push service.
	sendTimeout = 30 * time.Second
	// closeGrace is how long Close lets a push being sent finish.
	closeGrace = 5 * time.Second
	// DefaultSubject is the VAPID subject (a contact for the push
	// services' operators) unless configured otherwise.
	DefaultSubject = "mailto:hitl@localhost"
)

// Options configure a Service. The zero value is usable.
type Options struct {
	// Logger receives operational logs; nil discards them. Keys and
	// payloads are never logged.
	Logger *slog.Logger
	// Now is the clock; nil means the broker's.
	Now func() time.Time
	// Subject is the VAPID subject: a mailto: or https: URL where push
	// services can reach whoever runs hitl; "" means DefaultSubject.
	Subject string
	// Cipher seals the VAPID private key at rest. Without one the key
	// pair lives in memory: subscriptions stop working when the server
	// restarts.
	Cipher *secret.Cipher
	// Identities finds people's groups; nil means targeted groups reach
	// no one.
	Identities hitl.Identities
	// AllowPrivate lets subscriptions name loopback, private and
	// link-local push endpoints, and plain http on loopback (tests); the
	// same switch as webhooks'.
	AllowPrivate bool
	// RetryBase is the wait before the first retry; 0 means 10 seconds.
	RetryBase time.Duration
}

// Service is the Web Push channel over one broker. Create it with New,
// then Start it; Close it before the store.
type Service struct {
	b         *broker.Broker
	store     hitl.NotificationStore
	subs      hitl.PushStore
	ids       hitl.Identities
	log       *slog.Logger
	now       func() time.Time
	subject   string
	cipher    *secret.Cipher
	private   bool
	retryBase time.Duration
	client    *http.Client

	ctx    context.Context // ends with Close: in-flight work stops
	cancel context.CancelFunc
	intake *worker.Intake[*hitl.Interaction] // created interactions for the worker
	due    worker.Due                        // when the worker last looked at the due rows; the worker's alone
	closed chan struct{}
	once   sync.Once
	wg     sync.WaitGroup

	mu   sync.Mutex
	keys vapidKeys
}

// Store is what the channel keeps its rows, settings and subscriptions
// in; both of hitl's stores are one.
type Store interface {
	hitl.NotificationStore
	hitl.PushStore
}

// New returns the Web Push channel over b, keeping its rows and
// subscriptions in store.
func New(b *broker.Broker, store Store, opts *Options) *Service {
	if opts == nil {
		opts = &Options{}
	}
	s := &Service{
		b: b, store: store, subs: store, ids: opts.Identities, log: opts.Logger, now: opts.Now,
		subject: opts.Subject, cipher: opts.Cipher, private: opts.AllowPrivate, retryBase: opts.RetryBase,
		intake: worker.NewIntake[*hitl.Interaction](), closed: make(chan struct{}),
	}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if s.now == nil {
		s.now = b.Now
	}
	if s.subject == "" {
		s.subject = DefaultSubject
	}
	if s.retryBase <= 0 {
		s.retryBase = defaultRetryBase
	}
	s.client = webhook.PublicClient(sendTimeout, s.private)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// Start loads the VAPID keys (made on first start) and starts the worker,
// which first schedules what was missed while the server was down.
func (s *Service) Start(ctx context.Context) error {
	if err := CheckSubject(s.subject); err != nil {
		return err
	}
	keys, err := s.initKeys(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.keys = keys
	s.mu.Unlock()
	s.intake.Sweep()
	s.b.Observe(s.observe)
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

// observe is the broker's observer: new pending interactions are queued
// for the worker. It never blocks.
func (s *Service) observe(ev *hitl.Event) {
	if in, ok := worker.CreatedPending(ev); ok {
		s.intake.Add(in)
	}
}
