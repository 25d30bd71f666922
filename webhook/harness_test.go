package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/receipt"
	"github.com/hitl-sh/hitl/slack"
)

// testKey seals secrets in tests.
var testKey = []byte("0123456789abcdef0123456789abcdef")

// testServerSecret signs callbacks in tests.
const testServerSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// replica is one hitl process: a store, a broker and the webhooks.
type replica struct {
	t     *testing.T
	store hitltest.Store
	b     *broker.Broker
	// receipts signs the broker's receipts.
	receipts *receipt.Service
	s        *Service
	stepped  chan struct{} // receives after each worker step
	scanned  atomic.Int64  // the worker's cursor held in memory, after its last step
	close    func()        // closes the broker and the store
	once     sync.Once
}

// start opens w and starts a broker and the webhooks on it, all closed
// when t ends (or by stop). The receivers of tests listen on loopback, so
// private addresses are allowed (startWith leaves that to opts).
func start(t *testing.T, w hitltest.DB, opts Options) *replica {
	t.Helper()
	opts.AllowPrivate = true
	return startWith(t, w, opts)
}

// startWith is start with opts as they are.
func startWith(t *testing.T, w hitltest.DB, opts Options) *replica {
	t.Helper()
	r := open(t, w)
	cipher, err := slack.NewCipher(testKey)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Sealer == nil {
		opts.Sealer = cipher
	}
	if opts.RetryBase == 0 {
		opts.RetryBase = 20 * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(testWriter{t}, nil))
	}
	r.s = New(r.store, r.b, &opts)
	r.s.stepDone = func() {
		r.scanned.Store(r.s.cursor.scanned)
		select {
		case r.stepped <- struct{}{}:
		default:
		}
	}
	if err := r.s.Start(t.Context()); err != nil {
		t.Fatalf("start webhooks: %v", err)
	}
	return r
}

// testWriter writes logs to t.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// open opens w and starts a broker on it, without the webhooks: a process
// of an older hitl, or one that crashed before sending.
func open(t *testing.T, w hitltest.DB) *replica {
	t.Helper()
	e := hitltest.OpenEngine(t, w, &hitltest.EngineOptions{Receipts: true})
	r := &replica{t: t, store: e.Store, b: e.Broker, receipts: e.Receipts, stepped: make(chan struct{}, 1)}
	r.close = e.Close
	t.Cleanup(r.stop)
	return r
}

// stop closes the webhooks, the broker and the store, as a process ending.
func (r *replica) stop() {
	r.once.Do(func() {
		if r.s != nil {
			r.s.Close()
		}
		r.close()
	})
}

// waitUntil waits for cond to hold, looking again after each worker step
// (and now and then, for work another replica does), for at most 30
// seconds.
func (r *replica) waitUntil(what string, cond func() bool) {
	r.t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-r.stepped:
		case <-tick.C:
		case <-deadline.C:
			r.t.Fatalf("timed out waiting until %s", what)
		}
	}
}

// deliveries returns the deliveries of an interaction.
func (r *replica) deliveries(id string) []*hitl.WebhookDelivery {
	r.t.Helper()
	list, err := r.store.WebhookDeliveries(context.Background(), hitl.DeliveryFilter{InteractionID: id})
	if err != nil {
		r.t.Fatalf("WebhookDeliveries: %v", err)
	}
	return list
}

// admin is the context of an admin.
func admin(t *testing.T) context.Context {
	return hitl.WithCaller(t.Context(), hitl.Caller{Name: "root", Role: hitl.RoleAdmin, Channel: hitl.ChannelAPI})
}

// agent is the context of an agent.
func agent(t *testing.T) context.Context {
	return hitl.WithCaller(t.Context(), hitl.Caller{Name: "deployer", Role: hitl.RoleAgent, Channel: hitl.ChannelAPI})
}

// received is one request the receiver got.
type received struct {
	id, timestamp, signature string
	body                     []byte
	verified                 bool
}

// receiver is a webhook endpoint that checks every request's signature
// with the algorithm Standard Webhooks publishes (written out here, not
// taken from the code under test), and answers with the statuses queued
// in fail (then 204).
type receiver struct {
	*httptest.Server
	secrets map[string][]byte // by URL path
	mu      sync.Mutex
	fail    []int
	got     chan received
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{secrets: map[string][]byte{}, got: make(chan received, 1000)}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		g := received{id: r.Header.Get("webhook-id"), timestamp: r.Header.Get("webhook-timestamp"),
			signature: r.Header.Get("webhook-signature"), body: body}
		rc.mu.Lock()
		secret := rc.secrets[r.URL.Path]
		status := http.StatusNoContent
		if len(rc.fail) > 0 {
			status, rc.fail = rc.fail[0], rc.fail[1:]
		}
		rc.mu.Unlock()
		g.verified = verify(secret, g)
		rc.got <- g
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// expect sets the secret that signs what arrives at path.
func (rc *receiver) expect(path, secret string) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		panic(err)
	}
	rc.mu.Lock()
	rc.secrets[path] = key
	rc.mu.Unlock()
}

// failNext makes the next requests answer these statuses.
func (rc *receiver) failNext(statuses ...int) {
	rc.mu.Lock()
	rc.fail = append(rc.fail, statuses...)
	rc.mu.Unlock()
}

// next returns the next request, waiting at most 30 seconds.
func (rc *receiver) next(t *testing.T) received {
	t.Helper()
	select {
	case g := <-rc.got:
		return g
	case <-time.After(30 * time.Second):
		t.Fatal("timed out waiting for a webhook")
	}
	return received{}
}

// verify checks a request as the specification says: the HMAC-SHA256,
// keyed with the secret's bytes, of "{id}.{timestamp}.{body}", base64,
// among the space-separated "v1,…" signatures, with a timestamp within
// five minutes.
func verify(key []byte, g received) bool {
	if key == nil {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(g.id + "." + g.timestamp + "." + string(g.body)))
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	sec, err := strconv.ParseInt(g.timestamp, 10, 64)
	if err != nil || time.Since(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		return false
	}
	for _, s := range strings.Fields(g.signature) {
		if hmac.Equal([]byte(s), []byte(want)) {
			return true
		}
	}
	return false
}
