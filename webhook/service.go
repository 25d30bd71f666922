// Package webhook sends hitl's webhooks: an interaction's callback_url
// when it ends, and admins' subscriptions to interaction events, signed
// per Standard Webhooks and delivered at least once from durable rows.
//
// Deliveries are made from the event log, not inside the transactions
// that append its events: a cursor in the store marks the last event
// turned into delivery rows, and it moves in the same transaction that
// inserts them (by compare-and-set, so one replica enqueues each event).
// A crash before that commit leaves the cursor behind, and the events are
// read again; one after it leaves the rows. Either way nothing is lost,
// and the engine's writes stay as they were. The rows are then claimed
// with a lease, as Slack's are, and retried with backoff for up to a day,
// with the same webhook-id.
package webhook

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/worker"
	"github.com/hitl-sh/hitl/standardwebhooks"
)

// Defaults of Options.
const (
	defaultRetryBase = 5 * time.Second
	defaultMaxRetry  = time.Hour
	defaultMaxAge    = 24 * time.Hour
	defaultTimeout   = 15 * time.Second
	lease            = time.Minute // longer than a request's timeout
	idleRecheck      = time.Minute // look at the store again at least this often
	retryAfterError  = 5 * time.Second
	skippedRecheck   = 250 * time.Millisecond
	closeGrace       = 5 * time.Second
	scanBatch        = 200
	claimBatch       = 20
	sendersPerClaim  = 8
)

// Store is what the webhooks keep in the store: their own rows, and the
// event log they are made from.
type Store interface {
	hitl.WebhookStore
	Events(ctx context.Context, after int64, limit int) ([]*hitl.Event, error)
}

// Feed is the engine's event fan-out (a *broker.Broker): it wakes the
// worker, and says up to where the log is complete.
type Feed interface {
	Observe(fn func(*hitl.Event)) int64
	Delivered() int64
}

// Sealer encrypts secrets at rest (a *slack.Cipher).
type Sealer interface {
	Seal(field, value string) (string, error)
	Open(field, sealed string) (string, error)
}

// Options configure a Service. The zero value is usable.
type Options struct {
	// Logger receives delivery failures; nil discards them. Bodies and
	// secrets are never logged.
	Logger *slog.Logger
	// ServerSecret signs callback_url deliveries (whsec_…). When "", a
	// secret is made on first start and stored sealed with Sealer.
	ServerSecret string
	// Sealer seals stored secrets (the server's and the subscriptions');
	// without it, subscriptions cannot be made and the server's secret
	// must be given.
	Sealer Sealer
	// AllowPrivate lets webhooks reach loopback, private and link-local
	// addresses.
	AllowPrivate bool
	// RetryBase is the first retry's delay, doubled for each one after
	// (with jitter), up to MaxRetryDelay; 0 means 5 s.
	RetryBase     time.Duration
	MaxRetryDelay time.Duration // 0 means an hour
	// MaxAge is how long a delivery is retried; 0 means a day.
	MaxAge time.Duration
	// Timeout bounds one attempt; 0 means 15 s.
	Timeout time.Duration
	// UserAgent is sent with each delivery; "" means "hitl-webhooks".
	UserAgent string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Resolver resolves hosts when URLs are checked; nil means
	// net.DefaultResolver.
	Resolver *net.Resolver
}

// Service sends webhooks. Create it with New, then Start it.
type Service struct {
	store    Store
	feed     Feed
	log      *slog.Logger
	opts     Options
	now      func() time.Time
	resolver *net.Resolver
	client   *http.Client

	// serverKey signs callbacks; nil when no secret could be had.
	serverKey    []byte
	serverSecret string

	kick   chan struct{}
	closed chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	once   sync.Once
	wg     sync.WaitGroup

	cursor cursor     // where the worker is in the event log; the worker's alone
	recent recent     // the events delivered that the worker has not read
	due    worker.Due // when the store was last asked for due deliveries; the worker's alone

	// stepDone, when set (by tests), is called after each worker step.
	stepDone func()
}

// New returns the webhooks over store, woken by feed's events.
func New(store Store, feed Feed, opts *Options) *Service {
	if opts == nil {
		opts = &Options{}
	}
	s := &Service{store: store, feed: feed, opts: *opts, log: opts.Logger, now: opts.Now, resolver: opts.Resolver,
		kick: make(chan struct{}, 1), closed: make(chan struct{})}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.resolver == nil {
		s.resolver = net.DefaultResolver
	}
	o := &s.opts
	o.RetryBase = orDefault(o.RetryBase, defaultRetryBase)
	o.MaxRetryDelay = orDefault(o.MaxRetryDelay, defaultMaxRetry)
	o.MaxAge = orDefault(o.MaxAge, defaultMaxAge)
	o.Timeout = orDefault(o.Timeout, defaultTimeout)
	if o.UserAgent == "" {
		o.UserAgent = "hitl-webhooks"
	}
	s.client = newClient(o.Timeout, o.AllowPrivate)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// newClient returns the HTTP client deliveries are sent with: no proxy
// (it would hide the address dialled), no redirects (a 3xx is a failed
// attempt), and unless allowPrivate a dialer that refuses non-public
// addresses.
func newClient(timeout time.Duration, allowPrivate bool) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		d.Control = dialControl
	}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			DialContext:           d.DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          100,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: timeout,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Start loads the server's secret (making and storing one on first start)
// and starts the worker, which first sends what came due while the server
// was down.
func (s *Service) Start(ctx context.Context) error {
	if err := s.loadServerSecret(ctx); err != nil {
		return err
	}
	s.recent.begin(s.feed.Observe(func(ev *hitl.Event) {
		s.recent.add(ev)
		s.wake()
	}))
	s.wg.Go(s.run)
	return nil
}

// wake makes the worker look at the log and the store again.
func (s *Service) wake() {
	worker.Wake(s.kick)
}

// Close stops the worker. Deliveries in flight may finish for a moment;
// the rest are sent after their lease, here or on another replica.
func (s *Service) Close() error {
	s.once.Do(func() {
		close(s.closed)
		worker.Stop(&s.wg, closeGrace, s.cancel)
	})
	s.wg.Wait()
	return nil
}

// loadServerSecret sets the key callbacks are signed with: the one given,
// else the one stored, else a new one stored for every replica.
func (s *Service) loadServerSecret(ctx context.Context) error {
	secret := s.opts.ServerSecret
	if secret == "" {
		var err error
		secret, err = s.storedServerSecret(ctx)
		if errors.Is(err, errNoSealer) {
			s.log.Warn("no webhook secret (HITL_WEBHOOK_SECRET) and no secret key to store one (HITL_SECRET_KEY): callback_url is refused")
			return nil
		} else if err != nil {
			return err
		}
	}
	key, err := standardwebhooks.DecodeSecret(secret)
	if err != nil {
		return err
	}
	s.serverKey, s.serverSecret = key, secret
	return nil
}

// errNoSealer is returned when a secret would have to be stored (or read)
// without a key to seal it.
var errNoSealer = hitl.Errorf(hitl.EINVALID, "webhook secrets need a secret key to be stored: set HITL_SECRET_KEY (or --secret-key-file)")

// sealField is the name sealed secrets are bound to.
const sealField = "webhook secret"

func (s *Service) storedServerSecret(ctx context.Context) (string, error) {
	if s.opts.Sealer == nil {
		return "", errNoSealer
	}
	sealed, err := s.store.WebhookSecret(ctx)
	if hitl.ErrorCode(err) == hitl.ENOTFOUND {
		secret, err := standardwebhooks.NewSecret()
		if err != nil {
			return "", err
		}
		mine, err := s.opts.Sealer.Seal(sealField, secret)
		if err != nil {
			return "", err
		}
		sealed, err = s.store.InitWebhookSecret(ctx, mine)
		if err != nil {
			return "", err
		}
	} else if err != nil {
		return "", err
	}
	return s.opts.Sealer.Open(sealField, sealed)
}
