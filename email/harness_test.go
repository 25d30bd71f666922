package email_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/email"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/secret"
)

// mailbox is an SMTP server on loopback (go-smtp, over TCP) that keeps
// what it receives, with PLAIN authentication.
type mailbox struct {
	t    *testing.T
	addr string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey

	mu      sync.Mutex
	got     []*received
	changed chan struct{}
}

// received is one mail as the server took it.
type received struct {
	user string // authenticated as
	from string
	to   []string
	data []byte
}

func newMailbox(t *testing.T) *mailbox {
	t.Helper()
	m := &mailbox{t: t, changed: make(chan struct{})}
	srv := smtp.NewServer(backend{m})
	srv.Domain = "localhost"
	srv.TLSConfig = m.serverTLS() // offered with STARTTLS
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m.addr = l.Addr().String()
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return m
}

// url is the SMTP URL of the mailbox, with its credentials.
func (m *mailbox) url() string { return "smtp://hitl:s3cret-pw@" + m.addr }

// wait returns the first n mails, waiting up to ten seconds for them.
func (m *mailbox) wait(n int) []*received {
	m.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		m.mu.Lock()
		got, ch := m.got, m.changed
		m.mu.Unlock()
		if len(got) >= n {
			return got[:n]
		}
		select {
		case <-ch:
		case <-deadline:
			m.t.Fatalf("waited for %d mails; got %d", n, len(got))
		}
	}
}

func (m *mailbox) all() []*received {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*received(nil), m.got...)
}

type backend struct{ m *mailbox }

func (b backend) NewSession(*smtp.Conn) (smtp.Session, error) { return &session{m: b.m}, nil }

type session struct {
	m   *mailbox
	cur received
}

func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, user, pass string) error {
		if user != "hitl" || pass != "s3cret-pw" {
			return errors.New("invalid credentials")
		}
		s.cur.user = user
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.cur.user == "" {
		return smtp.ErrAuthRequired
	}
	s.cur.from = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.cur.to = append(s.cur.to, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	got := s.cur
	got.data = b
	s.cur.to = nil
	s.m.mu.Lock()
	s.m.got = append(s.m.got, &got)
	close(s.m.changed)
	s.m.changed = make(chan struct{})
	s.m.mu.Unlock()
	return nil
}

func (s *session) Reset()        { s.cur.to, s.cur.from = nil, "" }
func (s *session) Logout() error { return nil }

// parsed is a mail read as a client reads it.
type parsed struct {
	to, subject string
	text, html  string
}

// parse reads a multipart/alternative mail with a text and an HTML part.
func parse(t *testing.T, r *received) parsed {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(r.data))
	if err != nil {
		t.Fatalf("read mail: %v", err)
	}
	dec := new(mime.WordDecoder)
	subject, err := dec.DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		t.Fatalf("subject: %v", err)
	}
	p := parsed{to: msg.Header.Get("To"), subject: subject}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("Content-Type: %q, %v; want multipart/alternative", msg.Header.Get("Content-Type"), err)
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		part, err := mr.NextPart() // decodes quoted-printable
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("read part: %v", err)
		}
		b, err := io.ReadAll(part)
		if err != nil {
			t.Fatalf("read part: %v", err)
		}
		ct, _, _ := mime.ParseMediaType(part.Header.Get("Content-Type"))
		switch ct {
		case "text/plain":
			p.text = string(b)
		case "text/html":
			p.html = string(b)
		}
	}
	if p.text == "" || p.html == "" {
		t.Fatalf("mail parts: text %d bytes, HTML %d bytes; want both", len(p.text), len(p.html))
	}
	return p
}

var linkRE = regexp.MustCompile(`https?://[^\s"<>]+/email/answer\?t=[^\s"<>]+`)

// links returns the answer links of a mail's text part, in order.
func (p parsed) links() []string { return linkRE.FindAllString(p.text, -1) }

// clock is a settable clock for the email channel.
type clock struct {
	mu sync.Mutex
	at time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at.IsZero() {
		return time.Now()
	}
	return c.at
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.at = t
	c.mu.Unlock()
}

// harness is a broker over a SQLite file with people, the email channel
// mailing a mailbox, and its link pages served over HTTP.
type harness struct {
	t     *testing.T
	store hitltest.Store
	b     *broker.Broker
	svc   *email.Service
	box   *mailbox
	web   *httptest.Server
	clock *clock
}

type harnessOptions struct {
	settings email.Settings
	noStart  bool
}

func newHarness(t *testing.T, o harnessOptions) *harness {
	t.Helper()
	h := &harness{t: t, box: newMailbox(t), clock: &clock{}}
	e := hitltest.OpenEngine(t, hitltest.SQLiteDB(t), &hitltest.EngineOptions{Users: []*hitl.User{
		{Name: "alice", Email: "alice@example.com", Groups: []string{"ops"}, PasswordHash: "x"},
		{Name: "bob", Email: "bob@example.com", Groups: []string{"ops"}, PasswordHash: "x"},
		{Name: "carol", Groups: []string{"ops"}, PasswordHash: "x"}, // no address
		{Name: "dave", Email: "dave@example.com", Admin: true, PasswordHash: "x"},
	}})
	h.store, h.b = e.Store, e.Broker
	cipher, err := secret.NewCipher(bytes.Repeat([]byte{7}, secret.KeySize), "email")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.web = httptest.NewServer(mux)
	settings := o.settings
	if settings.SMTPURL == "" {
		settings.SMTPURL = h.box.url()
	}
	if settings.From == "" {
		settings.From = "hitl <hitl@example.com>"
	}
	if settings.DelaySeconds == nil {
		zero := 0
		settings.DelaySeconds = &zero
	}
	h.svc = email.New(h.b, h.store, &email.Options{
		Settings: settings, Cipher: cipher, PublicURL: h.web.URL, Identities: h.store, Now: h.clock.now, TLSConfig: h.box.clientTLS(),
		Logger: slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	mux.Handle(email.LinkPath, h.svc.LinkHandler())
	t.Cleanup(func() {
		h.web.Close()
		h.svc.Close() // before the engine's cleanup
	})
	if !o.noStart {
		if err := h.svc.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return h
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

func (h *harness) get(id string) *hitl.Interaction {
	h.t.Helper()
	in, err := h.store.Interaction(context.Background(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	return in
}

// page is a link page's status and text.
type page struct {
	status int
	body   string
}

func fetch(t *testing.T, method, link string) page {
	t.Helper()
	var (
		resp *http.Response
		err  error
	)
	if method == http.MethodPost {
		base, form, _ := strings.Cut(link, "?") // the token goes in the form
		req, _ := http.NewRequest(http.MethodPost, base, strings.NewReader(form))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err = http.DefaultClient.Do(req)
	} else {
		resp, err = http.Get(link)
	}
	if err != nil {
		t.Fatalf("%s %s: %v", method, link, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, body: string(b)}
}

// emailDefaults are settings with a default list of addresses.
func emailDefaults(addrs ...string) email.Settings {
	return email.Settings{DefaultRecipients: addrs}
}

// tWriter sends logs to the test's log.
type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// serverTLS makes the mailbox's self-signed certificate for 127.0.0.1.
func (m *mailbox) serverTLS() *tls.Config {
	m.t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		m.t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "hitl test SMTP"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		m.t.Fatal(err)
	}
	if m.cert, err = x509.ParseCertificate(der); err != nil {
		m.t.Fatal(err)
	}
	m.key = key
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}

// clientTLS trusts the mailbox's certificate.
func (m *mailbox) clientTLS() *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(m.cert)
	return &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
}
