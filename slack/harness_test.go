package slack

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/slackfake"
)

// Credentials and the channel the tests configure, which the fake Slack
// accepts.
const (
	testBotToken = slackfake.BotToken
	testAppToken = slackfake.AppToken
	testChannel  = slackfake.Channel
	testSecret   = "8f742231b10e8888abcd99yyyzzz85a5"
)

// testKey seals secrets in tests.
var testKey = []byte("0123456789abcdef0123456789abcdef")

// harness is a broker over a SQLite file (or a PostgreSQL schema) with the Slack channel, talking
// to a fake Slack.
type harness struct {
	t     *testing.T
	db    hitltest.DB
	store hitltest.Store
	b     *broker.Broker
	close func() // closes the broker and the store
	s     *Service
	fake  *slackfake.Server
	opts  harnessOptions

	evMu     sync.Mutex
	events   []*hitl.Event
	evChange chan struct{}
	stepped  chan struct{} // closed and replaced after each worker step

	closeOnce sync.Once
}

type harnessOptions struct {
	settings  Settings
	config    *hitl.SlackConfig // stored before start; sealed here
	inProcess bool              // reach the fake without a network (synctest)
	now       func() time.Time
	noCipher  bool
	db        hitltest.DB // reuse a database (restart, replicas); zero means a new SQLite file
	fake      *slackfake.Server
	noStart   bool // leave starting the channel to the test
	log       *slog.Logger
}

// newHarness starts a store, a broker and the Slack channel. By default
// Slack is enabled over HTTP (a signing secret), posting at once.
func newHarness(t *testing.T, o harnessOptions) *harness {
	t.Helper()
	if o.db == (hitltest.DB{}) {
		o.db = hitltest.SQLiteDB(t)
	}
	h := &harness{t: t, db: o.db, fake: o.fake, opts: o, evChange: make(chan struct{}), stepped: make(chan struct{})}
	if h.fake == nil {
		h.fake = slackfake.NewUnstarted(t, nil)
	}
	e := hitltest.OpenEngine(t, o.db, &hitltest.EngineOptions{Now: o.now})
	h.store, h.b, h.close = e.Store, e.Broker, e.Close
	h.b.Observe(h.record)
	var (
		cipher *Cipher
		err    error
	)
	if !o.noCipher {
		cipher, err = NewCipher(testKey)
		if err != nil {
			t.Fatal(err)
		}
	}
	if o.config != nil {
		c := *o.config
		for _, f := range []struct {
			dst  *string
			name string
		}{{&c.BotToken, "bot_token"}, {&c.AppToken, "app_token"}, {&c.SigningSecret, "signing_secret"}} {
			if *f.dst, err = cipher.Seal(f.name, *f.dst); err != nil {
				t.Fatal(err)
			}
		}
		if err := h.store.SaveSlackConfig(context.Background(), &c); err != nil {
			t.Fatalf("save config: %v", err)
		}
	}
	opts := &Options{Settings: o.settings, Cipher: cipher, PublicURL: "https://hitl.example.com", Now: o.now, Logger: o.log, Identities: h.store}
	if o.inProcess {
		opts.APIURL, opts.HTTPClient = "http://slack.invalid/", h.fake.Client()
	} else {
		h.fake.Start()
		opts.APIURL = h.fake.URL + "/"
	}
	h.s, err = New(h.b, h.store, opts)
	if err != nil {
		t.Fatal(err)
	}
	h.s.stepDone = func() {
		h.evMu.Lock()
		close(h.stepped)
		h.stepped = make(chan struct{})
		h.evMu.Unlock()
	}
	t.Cleanup(h.stop)
	if !o.noStart {
		if err := h.s.Start(context.Background()); err != nil {
			t.Fatalf("start slack: %v", err)
		}
	}
	return h
}

// httpConfig is a stored configuration: enabled over HTTP, posting at
// once.
func httpConfig() *hitl.SlackConfig {
	return &hitl.SlackConfig{Enabled: true, BotToken: testBotToken, SigningSecret: testSecret, ChannelID: testChannel,
		DelaySeconds: 0, Mention: MentionNone, UnmappedUsers: UnmappedUntargeted}
}

// stop closes the channel, the broker and the store, as hitl serve does.
func (h *harness) stop() {
	h.closeOnce.Do(func() {
		h.s.Close()
		h.close()
	})
}

// ask creates an interaction as an agent.
func (h *harness) ask(req hitl.CreateRequest) *hitl.Interaction {
	h.t.Helper()
	if req.Question == "" && req.Type != hitl.TypeAction { // an action's is derived
		req.Question = "Deploy to **production**?"
	}
	ctx := hitl.WithCaller(context.Background(), hitl.Caller{Name: "agent", Channel: hitl.ChannelAPI, Role: hitl.RoleAgent})
	in, _, err := h.b.Create(ctx, req)
	if err != nil {
		h.t.Fatalf("create: %v", err)
	}
	return in
}

// get returns an interaction as it stands.
func (h *harness) get(id string) *hitl.Interaction {
	h.t.Helper()
	in, err := h.store.Interaction(context.Background(), id)
	if err != nil {
		h.t.Fatalf("get %s: %v", id, err)
	}
	return in
}

// row returns an interaction's Slack row.
func (h *harness) row(id string) *hitl.SlackMessage {
	h.t.Helper()
	m, err := h.store.SlackMessage(context.Background(), id)
	if err != nil {
		h.t.Fatalf("slack row of %s: %v", id, err)
	}
	return m
}

// waitPosted waits for the message of in to be posted and recorded (its
// notified event comes last) and returns the post and the row.
func (h *harness) waitPosted(in *hitl.Interaction) (slackfake.Call, *hitl.SlackMessage) {
	h.t.Helper()
	h.waitEvent(hitl.EventNotified, in.ID)
	calls := h.fake.WaitFor("chat.postMessage", 1, func(c slackfake.Call) bool { return strings.Contains(c.Blocks(), in.ID) })
	return calls[0], h.row(in.ID)
}

// waitEvent waits for an event of type typ about interaction id.
func (h *harness) waitEvent(typ hitl.EventType, id string) *hitl.Event {
	h.t.Helper()
	deadline := time.NewTimer(slackfake.Bound)
	defer deadline.Stop()
	for {
		h.evMu.Lock()
		ch := h.evChange
		for _, ev := range h.events {
			if ev.Type == typ && ev.InteractionID == id {
				h.evMu.Unlock()
				return ev
			}
		}
		h.evMu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			h.t.Fatalf("waited %v for a %s event of %s", slackfake.Bound, typ, id)
		}
	}
}

// eventsOf returns the events of type typ about id seen so far.
func (h *harness) eventsOf(typ hitl.EventType, id string) []*hitl.Event {
	h.evMu.Lock()
	defer h.evMu.Unlock()
	var out []*hitl.Event
	for _, ev := range h.events {
		if ev.Type == typ && ev.InteractionID == id {
			out = append(out, ev)
		}
	}
	return out
}

// stepSignal returns a channel closed after the worker's next step.
func (h *harness) stepSignal() <-chan struct{} {
	h.evMu.Lock()
	defer h.evMu.Unlock()
	return h.stepped
}

// record is the harness's observer of the broker's events.
func (h *harness) record(ev *hitl.Event) {
	h.evMu.Lock()
	h.events = append(h.events, ev)
	close(h.evChange)
	h.evChange = make(chan struct{})
	h.evMu.Unlock()
}

// waitEnded waits for the interaction to leave pending.
func (h *harness) waitEnded(id string) *hitl.Interaction {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), slackfake.Bound)
	defer cancel()
	in, err := h.b.Wait(ctx, id)
	if err != nil {
		h.t.Fatalf("wait for %s: %v", id, err)
	}
	return in
}

// waitUpdated waits for the message of in to be updated and returns the
// update.
func (h *harness) waitUpdated(in *hitl.Interaction) slackfake.Call {
	h.t.Helper()
	return h.fake.WaitFor("chat.update", 1, func(c slackfake.Call) bool { return strings.Contains(c.Blocks(), in.ID) })[0]
}

// post sends a signed request to one of the channel's HTTP handlers and
// returns the status and body.
func (h *harness) post(handler http.Handler, contentType string, body []byte, ts time.Time, secret string, header http.Header) (int, string) {
	h.t.Helper()
	req := newSignedRequest(body, contentType, ts, secret)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := newRecorder()
	handler.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// actionIDs returns the action IDs (tokens) of a posted message's
// elements, with the text of each.
func actionIDs(t *testing.T, c slackfake.Call) map[string]string {
	t.Helper()
	var blocks []map[string]any
	if err := json.Unmarshal([]byte(c.Blocks()), &blocks); err != nil {
		t.Fatalf("blocks of %s: %v", c.Method, err)
	}
	out := map[string]string{}
	for _, b := range blocks {
		els, _ := b["elements"].([]any)
		for _, e := range els {
			el, _ := e.(map[string]any)
			id, _ := el["action_id"].(string)
			text := ""
			if tx, ok := el["text"].(map[string]any); ok {
				text, _ = tx["text"].(string)
			}
			if id != "" {
				out[text] = id
			}
		}
	}
	return out
}
