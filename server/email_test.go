package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/email"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/secret"
	"github.com/hitl-sh/hitl/server"
)

func TestEmailConfigAPI(t *testing.T) {
	ss := newChannelServer(t, func(t testing.TB, e *hitltest.Engine, opts *server.Options) {
		cipher, err := secret.NewCipher(bytes.Repeat([]byte{7}, secret.KeySize), "email")
		if err != nil {
			t.Fatal(err)
		}
		em := email.New(e.Broker, e.Store, &email.Options{Cipher: cipher, Identities: e.Store})
		if err := em.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		e.OnClose(func() { em.Close() })
		opts.Email = em
	})

	if code, _ := ss.call(t, ss.responder, "GET", "/api/v1/email/config", ""); code != http.StatusForbidden {
		t.Errorf("GET config as a responder: %d, want 403", code)
	}
	code, body := ss.call(t, ss.admin, "GET", "/api/v1/email/config", "")
	if code != http.StatusOK || !strings.Contains(string(body), `"delay_seconds":120`) {
		t.Errorf("GET config: %d %s; want the defaults", code, body)
	}
	// A port nothing listens on, for the test connection.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	code, body = ss.call(t, ss.admin, "POST", "/api/v1/email/config",
		`{"enabled":true,"smtp_url":"smtp://hitl:pa55word-42@`+dead+`","from":"hitl@example.com","delay_seconds":30,"default_recipients":["ops@example.com"]}`)
	if code != http.StatusOK {
		t.Fatalf("POST config: %d %s", code, body)
	}
	var v email.ConfigView
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	if v.SMTPURL != "smtp://hitl:xxxxx@"+dead || strings.Contains(string(body), "pa55word-42") {
		t.Errorf("saved config shows smtp_url %q; want the password masked", v.SMTPURL)
	}
	raw, err := ss.store.ChannelSettings(context.Background(), hitl.ChannelEmail)
	if err != nil || bytes.Contains(raw, []byte("pa55word-42")) {
		t.Errorf("stored settings: %v; the password must be sealed, got %s", err, raw)
	}
	// The masked URL sent back keeps the password; a bad address is refused.
	if code, body = ss.call(t, ss.admin, "POST", "/api/v1/email/config", `{"smtp_url":"smtp://hitl:xxxxx@`+dead+`","delay_seconds":0}`); code != http.StatusOK {
		t.Fatalf("POST masked config: %d %s", code, body)
	}
	if code, _ = ss.call(t, ss.admin, "POST", "/api/v1/email/config", `{"from":"not an address"}`); code != http.StatusBadRequest {
		t.Errorf("POST a bad from: %d, want 400", code)
	}
	if code, _ = ss.call(t, ss.responder, "POST", "/api/v1/email/test", ""); code != http.StatusForbidden {
		t.Errorf("test as a responder: %d, want 403", code)
	}
	code, body = ss.call(t, ss.admin, "POST", "/api/v1/email/test", "")
	var res email.TestResult
	if err := json.Unmarshal(body, &res); err != nil || code != http.StatusOK || res.Success || !strings.Contains(res.Message, "Could not send") {
		t.Errorf("test against a closed port: %d %s; want success false with the reason", code, body)
	}
	if strings.Contains(string(body), "pa55word-42") {
		t.Errorf("the test result shows the password: %s", body)
	}
	// The links' pages need no credentials: a bad token is the channel's
	// refusal page, not the server's 401.
	code, body = ss.call(t, "", "GET", "/email/answer?t=v1.x.y.z.w", "")
	if code != http.StatusForbidden || !strings.Contains(string(body), "This link is not valid") {
		t.Errorf("GET /email/answer with a forged token, no credentials: %d %s", code, body)
	}
}
