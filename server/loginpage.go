package server

import (
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hitl-sh/hitl"
)

// The login page: a plain HTML form served by the server itself, so
// people can log in with any browser, without JavaScript. It has no inline
// script or style, so it works under Content-Security-Policy
// default-src 'self'.

// loginCSSPath is the login page's stylesheet.
const loginCSSPath = "/login.css"

// maxFormBytes bounds the login form.
const maxFormBytes = 16 << 10

// loginPageCSP is the policy of the login page.
const loginPageCSP = "default-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

var loginPage = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Log in · hitl</title>
<link rel="stylesheet" href="/login.css">
</head>
<body>
<main>
<h1>hitl</h1>
{{if .Local}}
<p>No login needed: this server has no users or tokens yet, so it answers this machine only, without a password.</p>
<p><a href="/">Open the inbox</a></p>
{{else if .User}}
<p>Logged in as <strong>{{.User}}</strong>.</p>
<p><a href="/">Open the inbox</a></p>
<form method="post" action="/logout">
<button type="submit">Log out</button>
</form>
{{else}}
{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
{{if .SignedOut}}<p role="status">You are signed out of hitl.{{if .EndSession}} <a href="{{.EndSession}}">Sign out of {{.SignOn}} too</a>{{end}}</p>{{end}}
{{if .SignOn}}<p><a class="signon" href="/login/oidc{{if .Next}}?next={{.Next}}{{end}}">Sign in with {{.SignOn}}</a></p>{{end}}
{{if .Passwords}}
<form method="post" action="/login">
<input type="hidden" name="next" value="{{.Next}}">
<label for="username">Username</label>
<input id="username" name="username" autocomplete="username" required autofocus value="{{.Username}}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Log in</button>
</form>
{{end}}
{{end}}
</main>
</body>
</html>
`))

const loginCSS = `body{font:16px/1.5 system-ui,sans-serif;margin:0;display:grid;place-items:center;min-height:100vh;background:#f6f7f9;color:#1b1d21}
main{background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 4px #0002;width:min(20rem,90vw)}
h1{margin:0 0 1rem;font-size:1.5rem}
form{display:grid;gap:.5rem}
input,button{font:inherit;padding:.5rem;border:1px solid #b8bcc4;border-radius:4px}
button{background:#1f5fd1;color:#fff;border-color:#1f5fd1;margin-top:.5rem;cursor:pointer}
.error{color:#a4161a}
.signon{display:block;text-align:center;padding:.5rem;border:1px solid #1f5fd1;border-radius:4px;color:#1f5fd1;text-decoration:none}
@media (prefers-color-scheme:dark){body{background:#15171b;color:#e8eaee}main{background:#1f2228}input{background:#15171b;color:inherit}}
`

// loginView is what the login page shows.
type loginView struct {
	Local    bool   // local mode: no login
	User     string // logged in already
	Error    string
	Username string
	Next     string
	// SignOn is the OpenID provider's name, when people may sign in
	// through it; Passwords, whether they may with a password.
	SignOn    string
	Passwords bool
	// SignedOut says the person just logged out; EndSession is the
	// provider's logout URL, if it has one.
	SignedOut  bool
	EndSession string
}

// newLoginView returns the login page's view, with the ways to sign in
// this server offers, going on to next.
func (s *Server) newLoginView(next string) loginView {
	v := loginView{Next: safeNext(next), Passwords: !s.auth.noPasswords}
	if s.auth.signOn != nil {
		v.SignOn = s.auth.signOn.Name()
	}
	return v
}

// renderLogin writes the login page with status.
func renderLogin(w http.ResponseWriter, status int, v loginView) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", loginPageCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	w.WriteHeader(status)
	_ = loginPage.Execute(w, v)
}

// handleLoginPage serves GET /login: the form, or who is logged in.
func (s *Server) handleLoginPage(w http.ResponseWriter, r *http.Request) {
	v := s.newLoginView(r.URL.Query().Get("next"))
	if r.URL.Query().Get("signed_out") != "" {
		v.SignedOut = true
		if s.auth.signOn != nil {
			v.EndSession = s.auth.signOn.EndSessionURL(s.auth.publicLoginURL())
		}
	}
	switch credentialFrom(r.Context()).kind {
	case "local":
		v.Local = true
	case "session":
		v.User = hitl.CallerFrom(r.Context()).Name
	}
	renderLogin(w, http.StatusOK, v)
}

// handleLoginForm serves POST /login: on success a redirect to the inbox
// (or the page named by next), else the form again with the reason.
func (s *Server) handleLoginForm(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		v := s.newLoginView("")
		v.Error = "The form could not be read."
		renderLogin(w, http.StatusBadRequest, v)
		return
	}
	username := r.PostForm.Get("username")
	v := s.newLoginView(r.PostForm.Get("next"))
	v.Username = username
	if _, err := s.login(w, r, username, r.PostForm.Get("password")); err != nil {
		status, ok := statusOf[hitl.ErrorCode(err)]
		if !ok || status == http.StatusInternalServerError {
			s.writeError(w, r, err) // logs it
			return
		}
		v.Error = hitl.ErrorMessage(err)
		renderLogin(w, status, v)
		return
	}
	next := v.Next
	if next == "" {
		next = "/"
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// handleLogoutForm serves POST /logout: the session ends, back to /login.
func (s *Server) handleLogoutForm(w http.ResponseWriter, r *http.Request) {
	if err := s.logout(w, r); err != nil {
		s.writeError(w, r, err)
		return
	}
	to := "/login"
	if s.auth.signOn != nil {
		to = "/login?signed_out=1" // offers the provider's logout too
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// handleLoginCSS serves the login page's stylesheet.
func (s *Server) handleLoginCSS(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_, _ = w.Write([]byte(loginCSS))
}

// maxNextLen bounds the page a login goes on to.
const maxNextLen = 2048

// safeNext returns next if it is a path on this server, else "": a login
// must not send people to another site. Browsers drop tabs and newlines
// anywhere in a URL (and control characters and spaces around it), and
// read a backslash as a slash, so "/\t/evil.example" and "/\\evil.example"
// are both "//evil.example", another site: next must start with one
// slash, hold no control character (C0, DEL or C1) and no backslash, be
// valid UTF-8, and parse as a path alone (no scheme, host or user).
func safeNext(next string) string {
	switch {
	case len(next) > maxNextLen, !utf8.ValidString(next),
		!strings.HasPrefix(next, "/"), strings.HasPrefix(next, "//"),
		strings.ContainsRune(next, '\\'), strings.ContainsFunc(next, unicode.IsControl):
		return ""
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return ""
	}
	return next
}
