package server_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/server"
)

// TestLoginPage: the fallback login page is plain HTML that works under
// CSP default-src 'self' (no inline script or style), logs in with a form
// post, stays on this site, and logs out.
func TestLoginPage(t *testing.T) {
	turns.Parallel(t)
	ts := newAuthServer(t, server.AuthOptions{LoginRate: 100, LoginBurst: 100})
	resp, body := ts.call(t, ts.anon, "GET", "/login?next=/inbox%3Fx%3D1", nil)
	page := string(body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `<form method="post" action="/login">`) || !strings.Contains(page, `type="password"`) {
		t.Fatalf("GET /login: %d\n%s", resp.StatusCode, page)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("CSP %q: want default-src 'self'", csp)
	}
	for _, bad := range []string{"<script", "<style", "style=", "onclick", "javascript:"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q, which CSP default-src 'self' blocks", bad)
		}
	}
	if !strings.Contains(page, `value="/inbox?x=1"`) {
		t.Errorf("the page does not carry next=/inbox?x=1:\n%s", page)
	}

	form := func(v url.Values) (*http.Response, string) {
		resp, body := ts.call(t, ts.anon, "POST", "/login", v.Encode(), "Content-Type", "application/x-www-form-urlencoded")
		return resp, string(body)
	}
	resp, page = form(url.Values{"username": {"alice"}, "password": {"nope-nope"}})
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(page, "invalid username or password") || !strings.Contains(page, `value="alice"`) {
		t.Errorf("wrong password: %d\n%s", resp.StatusCode, page)
	}
	for next, want := range map[string]string{"/inbox?x=1": "/inbox?x=1", "//evil.example/": "/", "https://evil.example/": "/", "/\\evil.example": "/"} {
		resp, page = form(url.Values{"username": {"alice"}, "password": {hitltest.AlicePassword}, "next": {next}})
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != want {
			t.Errorf("login with next %q: %d to %q, want 303 to %q\n%s", next, resp.StatusCode, resp.Header.Get("Location"), want, page)
		}
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "hitl_session" {
			cookie = &http.Cookie{Name: c.Name, Value: c.Value}
		}
	}
	if cookie == nil {
		t.Fatal("no session cookie after the form login")
	}
	alice := actor{name: "alice", cookie: cookie}
	_, body = ts.call(t, alice, "GET", "/login", nil)
	if !strings.Contains(string(body), "Logged in as <strong>alice</strong>") || !strings.Contains(string(body), `action="/logout"`) {
		t.Errorf("GET /login when logged in:\n%s", body)
	}
	resp, _ = ts.call(t, alice, "POST", "/logout", "")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
		t.Errorf("POST /logout: %d to %q, want 303 to /login", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, _ := ts.call(t, alice, "GET", "/api/v1/auth/me", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("me after logging out: %d, want 401", resp.StatusCode)
	}
}

// TestLoginPageInLocalMode: without users the page says no login is
// needed.
func TestLoginPageInLocalMode(t *testing.T) {
	turns.Parallel(t)
	ls := newLocalServer(t, server.AuthOptions{})
	status, body := ls.do(t, "GET", "/login", nil)
	if status != http.StatusOK || !strings.Contains(string(body), "No login needed") || strings.Contains(string(body), "<form") {
		t.Errorf("GET /login in local mode: %d\n%s", status, body)
	}
}

// TestLoginNextStaysOnSite checks the page a login goes on to: a path on
// this server only, in every spelling a browser would take for another
// site (it drops tabs and newlines, and reads a backslash as a slash).
func TestLoginNextStaysOnSite(t *testing.T) {
	turns.Parallel(t)
	ts := newAuthServer(t, server.AuthOptions{LoginRate: 100, LoginBurst: 100})
	cases := map[string]string{
		"/inbox?x=1":                    "/inbox?x=1",
		"/a/b#c":                        "/a/b#c",
		"/%09/evil.example":             "/%09/evil.example", // escaped: a path here
		"/\t/evil.example":              "/",
		"/\n/evil.example":              "/",
		"/\r\n/evil.example":            "/",
		"/\t\t/evil.example":            "/",
		"/\x00/evil.example":            "/",
		"/\x1f/evil.example":            "/",
		"/\x7f/evil.example":            "/",
		"/\u0085/evil.example":          "/", // C1 control
		" //evil.example":               "/",
		"\t//evil.example":              "/",
		"//evil.example/":               "/",
		"/\\evil.example":               "/",
		"/x\\..\\\\evil.example":        "/",
		"https://evil.example/":         "/",
		"javascript:alert(1)":           "/",
		"/\xff":                         "/",
		"/" + strings.Repeat("a", 3000): "/",
	}
	for next, want := range cases {
		resp, body := ts.call(t, ts.anon, "POST", "/login", url.Values{"username": {"alice"}, "password": {hitltest.AlicePassword}, "next": {next}}.Encode(), "Content-Type", "application/x-www-form-urlencoded")
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != want {
			t.Errorf("login with next %q: %d to %q, want 303 to %q\n%s", next, resp.StatusCode, resp.Header.Get("Location"), want, body)
		}
		if want != "/" {
			continue
		}
		_, page := ts.call(t, ts.anon, "GET", "/login?next="+url.QueryEscape(next), nil)
		if !strings.Contains(string(page), `name="next" value=""`) {
			t.Errorf("GET /login?next=%q carries it into the form:\n%s", next, page)
		}
	}
}
