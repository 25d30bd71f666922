package webpush_test

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/secret"
	"github.com/hitl-sh/hitl/webpush"
)

// subject is the VAPID subject the tests configure.
const subject = "mailto:ops@example.com"

// browser is one browser's subscription: its keys, private half included,
// as only the browser would hold them.
type browser struct {
	name     string
	endpoint string
	key      *ecdh.PrivateKey
	auth     []byte
}

// request is the subscription as the Push API serializes it.
func (b *browser) request(untargeted bool) hitl.PushSubscribeRequest {
	return hitl.PushSubscribeRequest{Endpoint: b.endpoint, Untargeted: untargeted, Keys: hitl.PushKeys{
		P256DH: base64.RawURLEncoding.EncodeToString(b.key.PublicKey().Bytes()),
		Auth:   base64.RawURLEncoding.EncodeToString(b.auth),
	}}
}

// delivery is one push the push service accepted, decrypted.
type delivery struct {
	browser string
	payload webpush.Payload
	raw     map[string]any
}

// pushService is a push service on loopback: it checks each request's
// VAPID JWT against the server's public key, decrypts the payload with the
// browser's private keys (RFC 8291, written here with the standard
// library), and answers per browser as the test says.
type pushService struct {
	t         *testing.T
	srv       *httptest.Server
	publicKey func() string

	mu       sync.Mutex
	browsers map[string]*browser
	answers  map[string][]int // statuses to answer next, per browser; then 201
	hits     map[string]int
	got      chan delivery
}

func newPushService(t *testing.T) *pushService {
	p := &pushService{t: t, browsers: map[string]*browser{}, answers: map[string][]int{}, hits: map[string]int{}, got: make(chan delivery, 100)}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

// browser makes a browser subscribed at this push service.
func (p *pushService) browser(name string) *browser {
	key, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		p.t.Fatal(err)
	}
	b := &browser{name: name, endpoint: p.srv.URL + "/push/" + name, key: key, auth: make([]byte, 16)}
	rand.Read(b.auth)
	p.mu.Lock()
	p.browsers[name] = b
	p.mu.Unlock()
	return b
}

// answer makes the push service answer the next pushes to name with
// statuses, in order.
func (p *pushService) answer(name string, statuses ...int) {
	p.mu.Lock()
	p.answers[name] = append(p.answers[name], statuses...)
	p.mu.Unlock()
}

func (p *pushService) hitsOf(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hits[name]
}

func (p *pushService) serve(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/push/")
	p.mu.Lock()
	b := p.browsers[name]
	p.hits[name]++
	status := http.StatusCreated
	if q := p.answers[name]; len(q) > 0 {
		status, p.answers[name] = q[0], q[1:]
	}
	p.mu.Unlock()
	if b == nil {
		http.Error(w, "no such subscription", http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	if err := p.check(r, body); err != nil {
		p.t.Errorf("push to %s: %v", name, err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if status != http.StatusCreated {
		w.WriteHeader(status)
		return
	}
	plain, err := decrypt(b, body)
	if err != nil {
		p.t.Errorf("push to %s: decrypt: %v", name, err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	d := delivery{browser: name}
	if err := json.Unmarshal(plain, &d.payload); err != nil {
		p.t.Errorf("push to %s: payload %q: %v", name, plain, err)
	}
	json.Unmarshal(plain, &d.raw)
	w.WriteHeader(http.StatusCreated)
	p.got <- d
}

// check validates a push request's headers and VAPID JWT (RFC 8292): an
// ES256 signature by the key in k=, which is the server's; aud the
// endpoint's origin; exp within 24 hours; sub the configured subject.
func (p *pushService) check(r *http.Request, body []byte) error {
	if r.Method != http.MethodPost || r.Header.Get("Content-Encoding") != "aes128gcm" {
		return fmt.Errorf("got %s with Content-Encoding %q; want POST aes128gcm", r.Method, r.Header.Get("Content-Encoding"))
	}
	if r.Header.Get("TTL") == "" || r.Header.Get("TTL") == "0" {
		return fmt.Errorf("TTL %q; want a positive TTL", r.Header.Get("TTL"))
	}
	if len(body) > 4096 {
		return fmt.Errorf("body of %d bytes; push services take at most 4096", len(body))
	}
	auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "vapid ")
	if !ok {
		return fmt.Errorf("Authorization %q; want vapid t=…, k=…", r.Header.Get("Authorization"))
	}
	var token, k string
	for part := range strings.SplitSeq(auth, ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch name {
		case "t":
			token = value
		case "k":
			k = value
		}
	}
	if k != p.publicKey() {
		return fmt.Errorf("k=%s; want the server's public key %s", k, p.publicKey())
	}
	claims, err := verifyJWT(token, k)
	if err != nil {
		return err
	}
	exp := time.Unix(int64(claims.Exp), 0)
	switch {
	case claims.Aud != p.srv.URL:
		return fmt.Errorf("aud %q; want %q", claims.Aud, p.srv.URL)
	case !exp.After(time.Now()) || exp.After(time.Now().Add(24*time.Hour)):
		return fmt.Errorf("exp %s; want within 24 hours", exp)
	case claims.Sub != subject:
		return fmt.Errorf("sub %q; want %q", claims.Sub, subject)
	}
	return nil
}

// vapidClaims are a VAPID JWT's claims.
type vapidClaims struct {
	Aud string  `json:"aud"`
	Exp float64 `json:"exp"`
	Sub string  `json:"sub"`
}

// verifyJWT checks token's ES256 signature with the public key k
// (base64url, uncompressed P-256) and returns its claims.
func verifyJWT(token, k string) (vapidClaims, error) {
	var c vapidClaims
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return c, fmt.Errorf("JWT %q has %d parts", token, len(parts))
	}
	var header struct{ Alg, Typ string }
	hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
	if err := json.Unmarshal(hb, &header); err != nil || header.Alg != "ES256" {
		return c, fmt.Errorf("JWT header %s; want alg ES256", hb)
	}
	kb, _ := base64.RawURLEncoding.DecodeString(k)
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), kb)
	if err != nil {
		return c, fmt.Errorf("k: %w", err)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return c, fmt.Errorf("JWT signature of %d bytes; want 64 (r||s)", len(sig))
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return c, errors.New("the JWT's signature does not verify with k")
	}
	cb, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if err := json.Unmarshal(cb, &c); err != nil {
		return c, fmt.Errorf("JWT claims %s: %w", cb, err)
	}
	return c, nil
}

// decrypt opens an aes128gcm body (RFC 8188) encrypted for b (RFC 8291).
func decrypt(b *browser, body []byte) ([]byte, error) {
	if len(body) < 21 {
		return nil, errors.New("body too short")
	}
	salt, rs, idlen := body[:16], binary.BigEndian.Uint32(body[16:20]), int(body[20])
	if idlen != 65 || len(body) < 21+idlen {
		return nil, fmt.Errorf("keyid of %d bytes; want the sender's 65-byte public key", idlen)
	}
	senderPub, err := ecdh.P256().NewPublicKey(body[21 : 21+idlen])
	if err != nil {
		return nil, err
	}
	ciphertext := body[21+idlen:]
	if uint32(len(ciphertext)) > rs {
		return nil, fmt.Errorf("record of %d bytes is larger than rs %d", len(ciphertext), rs)
	}
	shared, err := b.key.ECDH(senderPub)
	if err != nil {
		return nil, err
	}
	info := append([]byte("WebPush: info\x00"), b.key.PublicKey().Bytes()...)
	info = append(info, senderPub.Bytes()...)
	ikm, err := hkdf.Key(sha256.New, shared, b.auth, string(info), 32)
	if err != nil {
		return nil, err
	}
	cek, err := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: aes128gcm\x00", 16)
	if err != nil {
		return nil, err
	}
	nonce, err := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: nonce\x00", 12)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	plain, err := gcm.Open(nil, nonce, ciphertext, nil)
	if err != nil {
		return nil, err
	}
	plain = bytes.TrimRight(plain, "\x00")
	if len(plain) == 0 || plain[len(plain)-1] != 2 {
		return nil, errors.New("no last-record delimiter (2)")
	}
	return plain[:len(plain)-1], nil
}

// harness is a broker over a SQLite file with people, and the Web Push
// channel pushing to a push service on loopback.
type harness struct {
	t     *testing.T
	db    hitltest.DB
	store hitltest.Store
	b     *broker.Broker
	close func() // closes the broker and the store
	svc   *webpush.Service
	push  *pushService
	// live is svc for the push service's handlers, which run on their own
	// goroutines and may still be checking a push of the channel a
	// restart closed.
	live atomic.Pointer[webpush.Service]
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, db: hitltest.SQLiteDB(t), push: newPushService(t)}
	h.push.publicKey = func() string { return h.live.Load().PublicKey() }
	h.open()
	for _, u := range []*hitl.User{
		{Name: "alice", Groups: []string{"ops"}},
		{Name: "bob", Groups: []string{"dev"}},
		{Name: "carol"},
	} {
		u.PasswordHash = "x"
		if err := h.store.CreateUser(context.Background(), u); err != nil {
			t.Fatal(err)
		}
	}
	h.start()
	return h
}

// open opens the store and the broker.
func (h *harness) open() {
	h.t.Helper()
	e := hitltest.OpenEngine(h.t, h.db, nil)
	h.store, h.b, h.close = e.Store, e.Broker, e.Close
}

// start starts a Web Push channel over the broker.
func (h *harness) start() {
	h.t.Helper()
	c, err := secret.NewCipher(bytes.Repeat([]byte{9}, secret.KeySize), hitl.ChannelPush)
	if err != nil {
		h.t.Fatal(err)
	}
	svc := webpush.New(h.b, h.store, &webpush.Options{
		Subject: subject, Cipher: c, Identities: h.store, AllowPrivate: true, RetryBase: 20 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(tWriter{h.t}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err := svc.Start(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	h.svc = svc
	h.live.Store(svc)
	h.t.Cleanup(func() { svc.Close() })
}

// restart closes the channel, the broker and the store, and opens them
// again over the same file.
func (h *harness) restart() {
	h.t.Helper()
	h.svc.Close()
	h.close()
	h.open()
	h.start()
}

// subscribe subscribes b for user.
func (h *harness) subscribe(user string, b *browser, untargeted bool) {
	h.t.Helper()
	ctx := hitl.WithCaller(context.Background(), hitl.Caller{Name: user, Channel: hitl.ChannelWeb, Role: hitl.RoleResponder})
	if _, err := h.svc.Subscribe(ctx, b.request(untargeted)); err != nil {
		h.t.Fatalf("subscribe %s: %v", user, err)
	}
}

// ask creates an interaction as an agent.
func (h *harness) ask(req hitl.CreateRequest) *hitl.Interaction {
	h.t.Helper()
	ctx := hitl.WithCaller(context.Background(), hitl.Caller{Name: "build-bot", Channel: hitl.ChannelAPI, Role: hitl.RoleAgent})
	in, _, err := h.b.Create(ctx, req)
	if err != nil {
		h.t.Fatalf("create: %v", err)
	}
	return in
}

// next returns the next push the push service accepted, waiting up to ten
// seconds.
func (h *harness) next() delivery {
	h.t.Helper()
	select {
	case d := <-h.push.got:
		return d
	case <-time.After(10 * time.Second):
		h.t.Fatal("no push arrived in 10s")
	}
	return delivery{}
}

// tWriter sends logs to the test's log.
type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
