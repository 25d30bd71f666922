package main

import (
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/hitl-sh/hitl/internal/oidctest"
	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/oidc"
)

// redirectLogged matches hitl serve's log line with the redirect URL.
var redirectLogged = regexp.MustCompile(`redirect_url=(http://\S+)`)

// TestServeWithSignOn runs hitl serve with a real OpenID Provider: it
// logs the redirect URL to register, never the client secret, and a
// person signs in through the provider (without a browser) as a
// responder of their provider group; neither the code nor the state
// reaches the log, even at debug level.
func TestServeWithSignOn(t *testing.T) {
	turns.Parallel(t)
	addr := freeAddr(t)
	base := "http://" + addr
	const secret = "s3cret-of-the-hitl-client"
	op := oidctest.Start(t, []oidctest.Client{{ID: "hitl", Secret: secret, RedirectURIs: []string{base + oidc.CallbackPath}}},
		oidctest.Person{ID: "sub-alice", Username: "alice", Email: "alice@example.com", Name: "Alice Example", Groups: []string{"ops"}})
	db := filepath.Join(t.TempDir(), "hitl.db")
	p := startWith(t, []string{"HITL_OIDC_CLIENT_SECRET=" + secret, "HITL_OIDC_GROUP_ROLES=ops=responder"},
		"serve", "--addr", addr, "--db", db, "--public-url", base, "--oidc-issuer", op.Issuer, "--oidc-client-id", "hitl",
		"--oidc-name", "Example ID", "--no-password-login", "--log-level", "debug")
	t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGTERM)
		<-p.done
	})
	waitFor(t, "hitl serve to log its redirect URL and listen", func() bool {
		select {
		case <-p.done:
			t.Fatalf("hitl serve exited with %d:\n%s", p.code, p.stderr)
		default:
		}
		return listening.MatchString(p.stderr.String())
	})
	if m := redirectLogged.FindStringSubmatch(p.stderr.String()); m == nil || m[1] != base+oidc.CallbackPath {
		t.Errorf("redirect URL logged: got %v, want %s; log:\n%s", m, base+oidc.CallbackPath, p.stderr)
	}

	c := oidctest.NewBrowserlessClient()
	resp, err := c.Get(base + "/login/oidc")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cb := op.LogIn(t, c, resp.Header.Get("Location"), "alice")
	if resp, err = c.Get(cb.String()); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("callback: got %s, want 303", resp.Status)
	}
	resp, err = c.Get(base + "/api/v1/auth/me")
	if err != nil {
		t.Fatal(err)
	}
	me, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(me), `"name":"alice@example.com"`) || !strings.Contains(string(me), `"role":"responder"`) ||
		!strings.Contains(string(me), `"groups":["ops"]`) {
		t.Errorf("/me after signing in: %s", me)
	}
	resp, err = http.Post(base+"/api/v1/auth/login", "application/json", strings.NewReader(`{"username":"alice@example.com","password":"whatever"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("password login with --no-password-login: got %s, want 403", resp.Status)
	}
	out := mustRun(t, 0, "", "user", "ls", "--db", db)
	if !strings.Contains(out, "alice@example.com") {
		t.Errorf("user ls after the first sign-in:\n%s", out)
	}
	for what, v := range map[string]string{"client secret": secret, "code": cb.Query().Get("code"), "state": cb.Query().Get("state")} {
		if v == "" || strings.Contains(p.stderr.String(), v) {
			t.Errorf("the %s (%q) is in the log, or missing:\n%s", what, v, p.stderr)
		}
	}
}

// TestServeSignOnFlagsChecked: impossible sign-on settings stop hitl
// serve before it listens, saying which.
func TestServeSignOnFlagsChecked(t *testing.T) {
	turns.Parallel(t)
	db := filepath.Join(t.TempDir(), "hitl.db")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--no-password-login"}, "needs an OpenID provider"},
		{[]string{"--oidc-issuer", "https://id.example.com"}, "client ID is required"},
		{[]string{"--oidc-issuer", "https://id.example.com", "--oidc-client-id", "x", "--oidc-group-roles", "ops=root"}, "responder or admin"},
		{[]string{"--oidc-issuer", "https://id.example.com", "--oidc-client-id", "x", "--oidc-default-role", "admin"}, "responder or none"},
		{[]string{"--oidc-issuer", "id.example.com", "--oidc-client-id", "x"}, "http(s) URL"},
	} {
		_, stderr, code := hitlRunWith(t, "", nil, append([]string{"serve", "--addr", "127.0.0.1:0", "--db", db}, tt.args...)...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("hitl serve %s: exit %d, want 2 and %q:\n%s", strings.Join(tt.args, " "), code, tt.want, stderr)
		}
	}
}
