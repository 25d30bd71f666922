package ui_test

import (
	"bytes"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/oidctest"
	"github.com/hitl-sh/hitl/oidc"
	"github.com/hitl-sh/hitl/server"
	"golang.org/x/time/rate"
)

// newSignOnServer starts a real OpenID Provider on loopback (zitadel's
// example OP) and a hitl server that signs people in through it: alice is
// in ops (responders), bob in platform (admins).
func newSignOnServer(t *testing.T, noPasswords bool) (*hitlServer, *oidctest.OP) {
	t.Helper()
	addr := hitltest.FreeAddr(t)
	redirect := "http://" + addr + oidc.CallbackPath
	op := oidctest.Start(t, []oidctest.Client{{ID: "hitl", Secret: "hitl-secret", RedirectURIs: []string{redirect}}},
		oidctest.Person{ID: "sub-alice", Username: "alice", Email: "alice@example.com", Name: "Alice Example", Groups: []string{"ops"}},
		oidctest.Person{ID: "sub-bob", Username: "bob", Email: "bob@example.com", Name: "Bob Example", Groups: []string{"platform"}},
	)
	prov, err := oidc.New(oidc.Config{
		Issuer: op.Issuer, ClientID: "hitl", ClientSecret: "hitl-secret", RedirectURL: redirect, Name: "Example ID",
		GroupRoles: map[string]hitl.Role{"ops": hitl.RoleResponder, "platform": hitl.RoleAdmin},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := hitltest.Start(t, &hitltest.Options{Addr: addr, Server: &server.Options{Auth: server.AuthOptions{
		SignOn: prov, SignOnKey: bytes.Repeat([]byte{9}, 32), LoginRate: rate.Inf, NoPasswords: noPasswords,
	}}})
	srv := &hitlServer{Server: s.Server, Broker: s.Broker, IDs: s.Store}
	srv.token = s.Token(t, "build-bot", hitl.RoleAgent)
	return srv, op
}

// signInThroughProvider signs username in: "Sign in with Example ID" on
// the inbox's sign-in view (or, fromLoginPage, on the plain /login page),
// then the provider's own login form, filled in the browser.
func (p *page) signInThroughProvider(username string, fromLoginPage bool) {
	p.t.Helper()
	if fromLoginPage {
		p.do(chromedp.Navigate(p.srv.URL+"/login"), chromedp.Click(`a.signon`, chromedp.NodeVisible))
	} else {
		p.waitJS(`document.getElementById("login-signon").checkVisibility() &&
			document.getElementById("login-signon").textContent === "Sign in with Example ID"`)
		p.do(chromedp.Click(`#login-signon`, chromedp.NodeVisible))
	}
	p.do(
		chromedp.WaitVisible(`#username`),
		chromedp.SendKeys(`#username`, username),
		chromedp.SendKeys(`#password`, oidctest.Password+kb.Enter),
		// Back at hitl, in the inbox.
		chromedp.WaitVisible(`#view-inbox`),
	)
}

// TestSignOnInBrowser signs a person in through the provider in Chromium,
// end to end: the provider's groups are their hitl groups, so a question
// for ops reaches alice's inbox and one for security does not; bob, an
// admin through platform, sees both.
func TestSignOnInBrowser(t *testing.T) {
	srv, _ := newSignOnServer(t, false)
	forOps := srv.ask(t, map[string]any{"question": "Restart the ops database?", "interaction_type": "approval",
		"targets": map[string]any{"groups": []string{"ops"}}})
	forSecurity := srv.ask(t, map[string]any{"question": "Rotate the signing key?", "interaction_type": "approval",
		"targets": map[string]any{"groups": []string{"security"}}})

	alice := openTab(t, srv, true)
	alice.signInThroughProvider("alice", false)
	alice.waitSignedIn("alice@example.com")
	alice.waitCard(forOps)
	if alice.meStatus() != 200 {
		t.Fatal("alice's session does not hold")
	}
	if n := eval[int](alice, `document.querySelectorAll('[data-id="`+forSecurity+`"]').length`); n != 0 {
		t.Errorf("alice (ops) sees the question for security")
	}

	bob := openTab(t, srv, true)
	bob.signInThroughProvider("bob", true)
	bob.waitSignedIn("bob@example.com")
	bob.waitCard(forOps)
	bob.waitCard(forSecurity)
}

// TestSignOnOnlyInBrowser: with passwords turned off, the inbox's sign-in
// view offers the provider alone, and it works.
func TestSignOnOnlyInBrowser(t *testing.T) {
	srv, _ := newSignOnServer(t, true)
	p := openTab(t, srv, true)
	p.waitJS(`document.getElementById("login-signon").checkVisibility() && document.getElementById("login-form").hidden &&
		document.activeElement === document.getElementById("login-signon")`)
	p.signInThroughProvider("alice", false)
	p.waitSignedIn("alice@example.com")
}
