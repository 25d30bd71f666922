// Package slack is hitl's Slack channel. An interaction still unanswered
// after a delay (120 seconds unless configured or asked otherwise) is
// posted to a Slack channel as a Block Kit message with buttons, a select,
// checkboxes or a modal for its type; people answer there (or by replying
// in the message's thread) and the answer goes through the engine like any
// other. When the interaction ends, on any channel, the message is updated
// to say how, and its buttons go.
//
// Notifications are durable rows in the store (hitl.SlackStore), not
// sleeping goroutines: one timer is armed at the earliest row due, rows
// are claimed exactly once across replicas, and a row that came due while
// the server was down is worked on at start-up. Slack reaches hitl over
// Socket Mode, or over HTTP (/slack/events and /slack/interactivity) with
// Slack's request signatures verified.
package slack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/internal/worker"
	"github.com/slack-go/slack"
)

const (
	// idleRecheck bounds how long the timer sleeps, so that a replica
	// notices rows and configuration changes made by another.
	idleRecheck = 30 * time.Second
	// configRecheck is how often the stored configuration is read again.
	configRecheck = 30 * time.Second
	// retryAfterError is how long the timer waits after a store error.
	retryAfterError = 5 * time.Second
	// skippedRecheck is how soon the timer looks again at a row that is
	// due but held by another replica.
	skippedRecheck = time.Second
	// lease is how long a claimed row is held before another replica may
	// take it over (its holder died).
	lease = 2 * time.Minute
	// claimBatch is how many rows are claimed at once.
	claimBatch = 20
	// scheduleBatch is how many unscheduled interactions a sweep reads at
	// once.
	scheduleBatch = 200
	// seenWindow is how long Slack event IDs are remembered (Slack retries
	// within minutes).
	seenWindow = time.Hour
	// handleTimeout bounds handling one request from Slack.
	handleTimeout = 30 * time.Second
	// closeGrace is how long Close lets work in flight finish.
	closeGrace = 5 * time.Second
	// endedSweep is how many ended interactions in one step make the
	// worker sweep the waiting rows instead of ending each on its own.
	endedSweep = 20
)

// Options configure a Service. The zero value is usable.
type Options struct {
	// Logger receives operational logs; nil discards them. Secrets and
	// answer values are never logged.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Settings are the flags and HITL_SLACK_* variables, which win over
	// the stored configuration.
	Settings Settings
	// Cipher seals secrets saved through the API. Without one, secrets can
	// only come from Settings.
	Cipher *Cipher
	// PublicURL is where people reach hitl's web inbox, for the "Open in
	// hitl" link; "" leaves the link out.
	PublicURL string
	// Identities maps Slack users to hitl users by email (the SQLite and
	// PostgreSQL stores keep them); nil maps no one: every Slack user is
	// unmapped (see Config.UnmappedUsers).
	Identities hitl.Identities
	// APIURL is Slack's Web API; "" means https://slack.com/api/. Tests
	// point it at a fake.
	APIURL string
	// HTTPClient makes the Web API calls; nil means a client with a
	// 20-second timeout.
	HTTPClient *http.Client
}

// Service is the Slack channel over one broker. Create it with New, then
// Start it; Close it before the store.
type Service struct {
	b          *broker.Broker
	store      hitl.SlackStore
	notes      hitl.NotificationStore // the escalation replies' rows; nil when the store keeps none
	ids        hitl.Identities
	log        *slog.Logger
	now        func() time.Time
	env        Settings
	cipher     *Cipher
	publicURL  string
	apiURL     string
	httpClient *http.Client
	users      userCache

	ctx    context.Context // ends with Close: in-flight work stops
	cancel context.CancelFunc
	intake *worker.Intake[*hitl.Event] // created and ended events for the worker
	closed chan struct{}
	once   sync.Once
	wg     sync.WaitGroup

	// applyMu serialises reconfiguration (and so Socket Mode starts and
	// stops).
	applyMu sync.Mutex
	socket  *socketRun

	mu       sync.Mutex
	cfg      Config
	api      *slack.Client // nil without a bot token
	loadedAt time.Time
	refresh  bool // the worker should read the next due time from the store
	done     bool
	online   bool // Socket Mode connected

	// due is the worker's idea of the earliest message row due, and
	// replyDue of the earliest escalation reply row (worker only).
	due, replyDue dueCache

	// stepDone, when set (by tests), is called after each of the
	// worker's steps.
	stepDone func()
}

// New returns the Slack channel over b, keeping its rows in store: the
// store b runs over, as the SQLite and PostgreSQL stores keep Slack's rows
// (hitl.SlackStore) beside the interactions.
func New(b *broker.Broker, store hitl.SlackStore, opts *Options) (*Service, error) {
	if opts == nil {
		opts = &Options{}
	}
	if store == nil {
		return nil, errors.New("slack: no store for Slack messages")
	}
	notes, _ := store.(hitl.NotificationStore)
	s := &Service{
		b:          b,
		store:      store,
		notes:      notes,
		ids:        opts.Identities,
		log:        opts.Logger,
		now:        opts.Now,
		env:        opts.Settings,
		cipher:     opts.Cipher,
		publicURL:  opts.PublicURL,
		apiURL:     opts.APIURL,
		httpClient: opts.HTTPClient,
		intake:     worker.NewIntake[*hitl.Event](),
		closed:     make(chan struct{}),
	}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.apiURL == "" {
		s.apiURL = slack.APIURL
	}
	if s.httpClient == nil {
		s.httpClient = &http.Client{Timeout: 20 * time.Second}
	}
	s.users.m = make(map[string]cachedUser)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// Start reads the configuration, connects (Socket Mode) when configured,
// and starts the timer. It first schedules what was missed while the
// server was down and works on the rows that came due meanwhile.
func (s *Service) Start(ctx context.Context) error {
	if err := s.env.Validate(); err != nil {
		return fmt.Errorf("slack settings: %s", hitl.ErrorMessage(err))
	}
	cfg, err := s.effective(ctx)
	if err != nil {
		return fmt.Errorf("start slack: %w", err)
	}
	if err := cfg.validate(); err != nil {
		s.log.Error("Slack configuration is not usable; Slack stays off until it is fixed", "error", hitl.ErrorMessage(err))
		cfg.Enabled = false
	}
	s.applyMu.Lock()
	s.applyLocked(cfg)
	s.applyMu.Unlock()
	s.intake.Sweep()
	s.b.Observe(s.observe)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.run()
	}()
	return nil
}

// Close stops the timer and Socket Mode, and waits for requests from
// Slack being handled. Rows in flight are picked up again after their
// lease, here or on another replica.
func (s *Service) Close() error {
	s.once.Do(func() {
		s.mu.Lock()
		s.done = true
		s.mu.Unlock()
		s.intake.Close()
		close(s.closed)
		s.applyMu.Lock()
		s.stopSocketLocked()
		s.applyMu.Unlock()
		worker.Stop(&s.wg, closeGrace, s.cancel)
	})
	s.wg.Wait()
	return nil
}

// applyLocked makes cfg the configuration in effect: a new API client
// when the bot token changed, Socket Mode started, restarted or stopped,
// and a sweep when Slack was just turned on. Callers hold applyMu.
func (s *Service) applyLocked(cfg Config) {
	s.mu.Lock()
	old := s.cfg
	s.cfg = cfg
	s.loadedAt = s.now()
	if cfg.BotToken == "" {
		s.api = nil
	} else if s.api == nil || cfg.BotToken != old.BotToken || cfg.AppToken != old.AppToken {
		s.api = s.newAPI(cfg)
	}
	if cfg.usable() && !old.usable() {
		s.intake.Sweep()
	}
	s.mu.Unlock()

	want := cfg.Enabled && cfg.BotToken != "" && cfg.Transport() == TransportSocketMode
	if r := s.socket; r != nil && (!want || r.appToken != cfg.AppToken || r.botToken != cfg.BotToken) {
		s.stopSocketLocked()
	}
	if want && s.socket == nil && !s.isDone() {
		s.startSocketLocked(cfg)
	}
	s.poke()
}

// newAPI returns a Web API client for cfg's tokens.
func (s *Service) newAPI(cfg Config) *slack.Client {
	opts := []slack.Option{slack.OptionAPIURL(s.apiURL), slack.OptionHTTPClient(s.httpClient)}
	if cfg.AppToken != "" {
		opts = append(opts, slack.OptionAppLevelToken(cfg.AppToken))
	}
	return slack.New(cfg.BotToken, opts...)
}

// client returns the configuration in effect and its API client.
func (s *Service) client() (Config, *slack.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg, s.api
}

func (s *Service) isDone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

// poke wakes the worker to look at the store: something changed there
// that its events do not say.
func (s *Service) poke() {
	s.mu.Lock()
	s.refresh = true
	s.mu.Unlock()
	s.intake.Wake()
}

// goHandle runs fn in the background with the service's context, unless
// the service is closing. Close waits for it.
func (s *Service) goHandle(fn func(ctx context.Context)) {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		ctx, cancel := context.WithTimeout(s.ctx, handleTimeout)
		defer cancel()
		fn(ctx)
	}()
}

// observe is the broker's observer: created and ended interactions are
// queued for the worker; a vote or a claim updates the posted message in
// the background. It never blocks.
func (s *Service) observe(ev *hitl.Event) {
	switch ev.Type {
	case hitl.EventCreated:
		if ev.Interaction == nil || ev.Interaction.Status != hitl.StatusPending {
			return
		}
	case hitl.EventAnswered, hitl.EventExpired, hitl.EventCancelled:
	default:
		if escalationEvent(ev) {
			s.poke() // its reply's row is in the store
		}
		if progressEvent(ev) {
			s.goHandle(func(ctx context.Context) { s.progress(ctx, ev.InteractionID) })
		}
		return
	}
	s.mu.Lock()
	on := s.cfg.usable()
	s.mu.Unlock()
	// While Slack is off nothing is queued: turning it on sweeps the
	// store for what is pending.
	if on {
		s.intake.Add(ev)
	}
}
