package ui_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/emersion/go-smtp"
	"github.com/hitl-sh/hitl/internal/turns"
)

// smtpSink is an SMTP server on loopback (go-smtp, over TCP, no TLS or
// authentication) that keeps the recipients of what it receives.
type smtpSink struct {
	addr string
	mu   sync.Mutex
	to   []string
}

func newSMTPSink(t *testing.T) *smtpSink {
	t.Helper()
	s := &smtpSink{}
	srv := smtp.NewServer(sinkBackend{s})
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = l.Addr().String()
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return s
}

func (s *smtpSink) recipients() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.to...)
}

type sinkBackend struct{ s *smtpSink }

func (b sinkBackend) NewSession(*smtp.Conn) (smtp.Session, error) { return &sinkSession{s: b.s}, nil }

type sinkSession struct {
	s  *smtpSink
	to []string
}

func (x *sinkSession) Mail(string, *smtp.MailOptions) error { return nil }
func (x *sinkSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	x.to = append(x.to, to)
	return nil
}
func (x *sinkSession) Data(r io.Reader) error {
	io.Copy(io.Discard, r)
	x.s.mu.Lock()
	x.s.to = append(x.s.to, x.to...)
	x.s.mu.Unlock()
	return nil
}
func (x *sinkSession) Reset()        { x.to = nil }
func (x *sinkSession) Logout() error { return nil }

// emailConfig is what the tests read of GET /api/v1/email/config.
type emailConfig struct {
	Enabled           bool     `json:"enabled"`
	SMTPURL           string   `json:"smtp_url"`
	From              string   `json:"from"`
	DelaySeconds      int      `json:"delay_seconds"`
	DefaultRecipients []string `json:"default_recipients"`
}

func (s *hitlServer) emailConfig(t *testing.T) emailConfig {
	t.Helper()
	code, data := s.call(t, http.MethodGet, "/api/v1/email/config", nil)
	var c emailConfig
	if err := json.Unmarshal(data, &c); code != http.StatusOK || err != nil {
		t.Fatalf("GET /api/v1/email/config: %d %s", code, data)
	}
	return c
}

// setValue types value into the field sel, replacing what is there.
func setValue(sel, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`(() => { const el = document.querySelector(` + js(sel) + `); el.value = ` + js(value) + `;
		el.dispatchEvent(new Event("input", {bubbles: true})); })()`)
}

// TestEmailSettingsDialog: an admin sets up email in the dialog, tests
// the connection against an SMTP server on loopback (and sees a failure
// against a closed port), saves, and never sees the saved password.
func TestEmailSettingsDialog(t *testing.T) {
	turns.Parallel(t)
	sink := newSMTPSink(t)
	srv := newServerWith(t, serverOptions{email: true, push: true})
	p := openPage(t, srv, chromedp.EmulateViewport(1000, 980))
	p.clickTopBar("email-btn")
	p.waitJS(`document.getElementById("email-dialog").open`)

	// A closed port: the test fails, and says so.
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()
	p.do(setValue("#email-smtp-url", "smtp://"+deadAddr),
		setValue("#email-from", "hitl <hitl@example.com>"),
		setValue("#email-default-recipients", "ops@example.com\nsre@example.com"),
		chromedp.Click(chromedp.CSS("#email-test")))
	p.waitJS(`document.getElementById("email-result").dataset.kind === "error" && document.getElementById("email-result").textContent !== ""`)

	p.do(setValue("#email-smtp-url", "smtp://"+sink.addr), chromedp.Click(chromedp.CSS("#email-test")))
	p.waitJS(`document.getElementById("email-result").dataset.kind === "ok"`)
	if got := sink.recipients(); len(got) != 1 || got[0] != "ops@example.com" {
		t.Errorf("the test mail went to %v; want [ops@example.com], the first default recipient", got)
	}
	if c := srv.emailConfig(t); c.SMTPURL != "" {
		t.Errorf("testing saved the settings: %+v", c)
	}

	if os.Getenv("HITL_UPDATE_SCREENSHOTS") != "" {
		png, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		writeDoc(t, "email-settings.png", png)
	}
	for _, v := range runAxe(t, p) {
		t.Errorf("axe: %s (%s): %s %v", v.ID, v.Impact, v.Help, v.Nodes)
	}

	p.do(chromedp.Click(chromedp.CSS("#email-enabled")), setValue("#email-delay-seconds", "30"), chromedp.Click(chromedp.CSS("#email-save")))
	p.waitJS(`document.getElementById("email-result").textContent.includes("Saved")`)
	c := srv.emailConfig(t)
	if !c.Enabled || c.SMTPURL != "smtp://"+sink.addr || c.From != "hitl <hitl@example.com>" || c.DelaySeconds != 30 || strings.Join(c.DefaultRecipients, ",") != "ops@example.com,sre@example.com" {
		t.Errorf("saved %+v; want what the dialog set", c)
	}

	// A password saved through the API is shown masked and never reaches
	// the page; saving another field keeps it.
	if code, data := srv.call(t, http.MethodPost, "/api/v1/email/config", map[string]any{"smtp_url": "smtp://hitl:pa55-w0rd@" + sink.addr}); code != http.StatusOK {
		t.Fatalf("POST config: %d %s", code, data)
	}
	p.do(chromedp.Click(chromedp.CSS("#email-close")))
	p.waitJS(`!document.getElementById("email-dialog").open`)
	p.clickTopBar("email-btn")
	p.waitJS(`document.getElementById("email-smtp-url").value === "smtp://hitl:xxxxx@` + sink.addr + `"`)
	if eval[bool](p, `document.documentElement.outerHTML.includes("pa55-w0rd") || document.getElementById("email-smtp-url").value.includes("pa55")`) {
		t.Error("the page holds the SMTP password in clear")
	}
	p.do(setValue("#email-delay-seconds", "0"), chromedp.Click(chromedp.CSS("#email-save")))
	p.waitJS(`document.getElementById("email-result").textContent.includes("Saved")`)
	if c := srv.emailConfig(t); c.DelaySeconds != 0 || c.SMTPURL != "smtp://hitl:xxxxx@"+sink.addr {
		t.Errorf("after saving the delay: %+v; want delay 0 and the password kept (masked)", c)
	}
}
