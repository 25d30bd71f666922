package ui_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/auth"
	"github.com/hitl-sh/hitl/internal/turns"
	"golang.org/x/time/rate"
)

// signIn types a username and password into the sign-in form and
// presses Enter.
func (p *page) signIn(username, password string) {
	p.t.Helper()
	p.do(
		chromedp.Evaluate[chromedp.Void](`document.getElementById("login-username").value = ""`),
		chromedp.SendKeys(chromedp.CSS("#login-username"), username),
		chromedp.SendKeys(chromedp.CSS("#login-password"), password+kb.Enter),
	)
}

// waitSignedIn waits for the inbox of name, live.
func (p *page) waitSignedIn(name string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf(`document.getElementById("view-login").hidden && !document.getElementById("view-inbox").hidden &&
		document.getElementById("account-name").textContent === %s && document.getElementById("conn").dataset.state === "live"`, js(name)))
}

// text returns the text of the element matching the CSS selector sel.
func (p *page) text(sel string) string {
	p.t.Helper()
	return eval[string](p, fmt.Sprintf(`document.querySelector(%s)?.textContent ?? "(none)"`, js(sel)))
}

// meStatus is the status of GET /api/v1/auth/me from inside the page,
// with its cookies.
func (p *page) meStatus() int {
	p.t.Helper()
	return eval[int](p, `fetch("/api/v1/auth/me", {cache: "no-store"}).then(r => r.status)`)
}

// endSessions ends every session of a user, as a new password does.
func endSessions(t *testing.T, srv *hitlServer, name, password string) {
	t.Helper()
	hash, err := auth.HashPassword(password)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.IDs.SetPassword(context.Background(), name, hash); err != nil {
		t.Fatalf("set password of %s: %v", name, err)
	}
}

// countFetches keeps in window.__fetching the number of the page's
// requests not yet answered, in window.__fetched the time the last one
// started or ended, and in window.__fetchLog each one's method, address
// and status.
func countFetches() chromedp.Action[chromedp.Void] {
	return onNewDocument(`(() => {
		window.__fetching = 0;
		window.__fetched = performance.now();
		window.__fetchLog = [];
		const fetch = window.fetch;
		window.fetch = (url, init) => {
			window.__fetching++;
			window.__fetched = performance.now();
			const entry = (init?.method || "GET") + " " + url;
			return fetch(url, init).then(
				(r) => { window.__fetchLog.push(entry + " " + r.status); return r; },
				(e) => { window.__fetchLog.push(entry + " failed"); throw e; },
			).finally(() => {
				window.__fetching--;
				window.__fetched = performance.now();
			});
		};
	})();`)
}

// TestSignIn: with authentication on, the page asks for a sign-in before
// anything else (and opens no WebSocket); a wrong password is refused; a
// person sees and answers the questions meant for them, another person
// does not see them; signing out ends the session.
func TestSignIn(t *testing.T) {
	turns.Parallel(t)
	srv := newServerWith(t, serverOptions{auth: true})
	forAlice := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Approve alice's expense report?", "targets": map[string]any{"users": []string{"alice"}}})
	wait := srv.wait(t, forAlice)

	alice := openSignIn(t, srv)
	if got := eval[string](alice, `document.title`); got != "Sign in · hitl" {
		t.Errorf("title %q, want Sign in · hitl", got)
	}
	for _, id := range []string{"view-inbox", "tabs", "topbar-end", "account"} {
		if !eval[bool](alice, fmt.Sprintf(`document.getElementById(%s).hidden`, js(id))) {
			t.Errorf("#%s is shown before signing in", id)
		}
	}
	if n := srv.faults.wsCount(); n != 0 {
		t.Errorf("%d requests for /ws before signing in, want none", n)
	}
	type control struct {
		Label        string `json:"label"`
		Autocomplete string `json:"autocomplete"`
		Type         string `json:"type"`
	}
	fields := eval[[]control](alice, `[...document.querySelectorAll("#login-form input")].map(i => ({label: i.labels[0]?.textContent || "", autocomplete: i.autocomplete, type: i.type}))`)
	want := []control{{"Username", "username", "text"}, {"Password", "current-password", "password"}}
	if fmt.Sprint(fields) != fmt.Sprint(want) {
		t.Errorf("sign-in fields %+v, want %+v", fields, want)
	}
	if got := eval[string](alice, `document.activeElement.id`); got != "login-username" {
		t.Errorf("focus on #%s, want the username field", got)
	}

	// Nothing typed: said at the fields, nothing sent.
	alice.do(chromedp.Click(chromedp.CSS("#login-submit")))
	alice.waitJS(`document.getElementById("login-username-err").textContent === "Enter your username." && document.getElementById("login-username").getAttribute("aria-invalid") === "true"`)

	// A wrong password: announced above the form, the password cleared and
	// focused for another try.
	alice.signIn("alice", "not-her-password")
	alice.waitJS(`document.getElementById("login-error").textContent === "Wrong username or password."`)
	if got := eval[string](alice, `document.getElementById("login-error").getAttribute("role")`); got != "alert" {
		t.Errorf("the error's role is %q, want alert", got)
	}
	alice.waitJS(`document.activeElement.id === "login-password" && document.activeElement.value === ""`)
	if alice.meStatus() != 401 {
		t.Fatal("a wrong password signed alice in")
	}

	alice.do(chromedp.SendKeys(chromedp.CSS("#login-password"), alicePassword+kb.Enter))
	alice.waitSignedIn("alice")
	alice.waitCard(forAlice)
	if alice.text("#sign-out") != "Sign out" {
		t.Errorf("sign-out control reads %q", alice.text("#sign-out"))
	}
	if !eval[bool](alice, `document.getElementById("slack-btn").hidden`) {
		t.Error("alice, a responder, sees the Slack settings button")
	}

	// Bob is not a target: he sees the question for anyone, asked after
	// alice's, and never alice's.
	forAnyone := srv.ask(t, map[string]any{"question": "Anyone: which name for the release?"})
	bob := openSignIn(t, srv)
	bob.signIn("bob", bobPassword)
	bob.waitSignedIn("bob")
	bob.waitCard(forAnyone)
	bob.waitJS(`document.title === "(1) hitl"`)
	if n := eval[int](bob, fmt.Sprintf(`document.querySelectorAll(%s).length`, js(card(forAlice)))); n != 0 {
		t.Error("bob sees the question meant for alice")
	}
	alice.waitCard(forAnyone)

	alice.do(chromedp.Click(chromedp.CSS(card(forAlice) + ` button[data-answer="true"]`)))
	got := awaitResult(t, wait)
	assertValue(t, got, `true`)
	if got.Result.RespondedBy != "alice" {
		t.Errorf("responded_by = %q, want alice", got.Result.RespondedBy)
	}
	alice.waitCardText(forAlice, "Answer sent.")

	// Signing out ends the session and empties the page.
	alice.do(chromedp.Click(chromedp.CSS("#sign-out")))
	alice.waitJS(`!document.getElementById("view-login").hidden && document.getElementById("login-notice").textContent === "You have signed out."`)
	if n := eval[int](alice, `document.querySelectorAll(".card").length`); n != 0 {
		t.Errorf("%d cards on the page after signing out", n)
	}
	if got := alice.meStatus(); got != 401 {
		t.Errorf("GET /api/v1/auth/me after signing out: %d, want 401", got)
	}
	if !eval[bool](alice, `document.getElementById("account").hidden && document.getElementById("tabs").hidden`) {
		t.Error("the header still shows the account or the tabs after signing out")
	}
	// Bob is still signed in.
	if got := bob.meStatus(); got != 200 {
		t.Errorf("bob's session: %d after alice signed out, want 200", got)
	}
}

// TestSessionEndedByTheServer: when a session ends on the server (here a
// new password ends alice's sessions), the live stream is closed and the
// page returns to the sign-in view with a message; signing in again brings
// the questions back, and what was typed.
func TestSessionEndedByTheServer(t *testing.T) {
	turns.Parallel(t)
	srv := newServerWith(t, serverOptions{auth: true, streamRecheck: 50 * time.Millisecond})
	id := srv.ask(t, map[string]any{"question": "What went wrong last night?"})
	wait := srv.wait(t, id)
	p := openSignIn(t, srv)
	p.signIn("alice", alicePassword)
	p.waitSignedIn("alice")
	p.waitCard(id)
	p.do(chromedp.SendKeys(chromedp.CSS(card(id)+" textarea"), "The backup job"))

	endSessions(t, srv, "alice", "alice-new-password")
	p.waitJS(`!document.getElementById("view-login").hidden`)
	p.waitJS(`document.getElementById("login-notice").textContent.includes("Your session has ended")`)
	if n := eval[int](p, `document.querySelectorAll(".card").length`); n != 0 {
		t.Errorf("%d cards on the page after the session ended", n)
	}
	p.waitJS(`document.activeElement.id === "login-password"`) // the username is kept

	p.signIn("alice", "alice-new-password")
	p.waitSignedIn("alice")
	p.waitCard(id)
	area := card(id) + " textarea"
	if got := eval[string](p, fmt.Sprintf(`document.querySelector(%s).value`, js(area))); got != "The backup job" {
		t.Errorf("draft after signing in again: %q, want it kept", got)
	}
	p.do(chromedp.SendKeys(chromedp.CSS(area), " filled the disk"), ctrlEnter())
	assertValue(t, awaitResult(t, wait), `"The backup job filled the disk"`)
}

// TestAnswerAfterSessionEnded: an answer sent after the session ended
// (before the live stream noticed) gets 401, and the page returns to the
// sign-in view; the question is still there to answer after signing in.
func TestAnswerAfterSessionEnded(t *testing.T) {
	turns.Parallel(t)
	srv := newServerWith(t, serverOptions{auth: true, streamRecheck: time.Hour})
	id := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Scale the cluster to 12 nodes?"})
	wait := srv.wait(t, id)
	p := openSignIn(t, srv, countFetches())
	p.signIn("bob", bobPassword)
	p.waitSignedIn("bob")
	p.waitCard(id)
	// What the page asks right after signing in (its list, the push key,
	// one after another) must be answered first: one of them refused after
	// the sessions end would take the page to the sign-in view before the
	// answer is sent. Quiet for half a second: nothing more is coming.
	p.waitJS(`window.__fetching === 0 && performance.now() - window.__fetched > 500`)

	endSessions(t, srv, "bob", "bob-new-password")
	// The button is clicked in the page at once, where it is checked.
	answer := js(card(id) + ` button[data-answer="true"]`)
	if !eval[bool](p, `(() => { const b = document.querySelector(`+answer+`); if (!b?.checkVisibility()) return false; b.click(); return true; })()`) {
		t.Fatalf("the answer button is gone before the answer; the page's requests: %v", eval[[]string](p, `window.__fetchLog`))
	}
	p.waitJS(`document.getElementById("login-notice").textContent.includes("Your session has ended")`)
	if status := srv.status(t, id); status != hitl.StatusPending {
		t.Fatalf("status %s after an answer without a session, want pending", status)
	}

	p.signIn("bob", "bob-new-password")
	p.waitSignedIn("bob")
	p.waitCard(id)
	p.do(chromedp.Click(chromedp.CSS(card(id) + ` button[data-answer="true"]`)))
	assertValue(t, awaitResult(t, wait), `true`)
}

// TestSignInRateLimited: once the server refuses more attempts, the page
// says how long to wait.
func TestSignInRateLimited(t *testing.T) {
	turns.Parallel(t)
	srv := newServerWith(t, serverOptions{auth: true, loginRate: rate.Every(10 * time.Minute), loginBurst: 2})
	p := openSignIn(t, srv)
	for i := range 2 {
		p.signIn("alice", fmt.Sprintf("guess-%d", i))
		p.waitJS(`document.getElementById("login-error").textContent === "Wrong username or password."`)
	}
	p.signIn("alice", "guess-3")
	p.waitJS(`document.getElementById("login-error").textContent.startsWith("Too many sign-in attempts")`)
	msg := p.text("#login-error")
	if !strings.Contains(msg, "Try again in 10 minutes.") {
		t.Errorf("rate-limit message %q, want the wait (10 minutes)", msg)
	}
	// The right password waits too, without asking the server.
	p.signIn("alice", alicePassword)
	p.waitJS(`document.getElementById("login-error").textContent.startsWith("Too many sign-in attempts")`)
	if p.meStatus() != 401 {
		t.Error("signed in while rate-limited")
	}
}

// TestLocalModeHasNoSignOut: without users there is nothing to sign out
// of, and the local admin sees the Slack settings.
func TestLocalModeHasNoSignOut(t *testing.T) {
	turns.Parallel(t)
	srv := newServer(t)
	p := openPage(t, srv)
	p.waitJS(`!document.getElementById("slack-btn").hidden`)
	if !eval[bool](p, `document.getElementById("account").hidden && document.getElementById("view-login").hidden`) {
		t.Error("local mode shows an account or the sign-in view")
	}
}

// TestSignInAccessibility runs axe-core on the sign-in view with an error
// shown, and on the inbox of a signed-in admin (the header with the
// account and the Slack button), and checks that header at 375 px.
func TestSignInAccessibility(t *testing.T) {
	turns.Parallel(t)
	srv := newServerWith(t, serverOptions{auth: true})
	srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Rotate the database password?"})
	for _, scheme := range []string{"light", "dark"} {
		t.Run(scheme, func(t *testing.T) {
			p := openSignIn(t, srv, chromedp.EmulateViewport(960, 800), emulateMedia(scheme))
			p.signIn("carol", "wrong")
			p.waitJS(`document.getElementById("login-error").textContent !== ""`)
			checkAxe(t, p)
			p.signIn("carol", carolPassword)
			p.waitSignedIn("carol")
			p.waitJS(`!document.getElementById("slack-btn").hidden && document.querySelector(".card")`)
			checkAxe(t, p)
		})
	}
	t.Run("phone", func(t *testing.T) {
		p := openSignIn(t, srv, chromedp.EmulateViewport(375, 812, chromedp.EmulateMobile), emulateMedia("light"))
		checkNarrow(t, p)
		p.signIn("carol", carolPassword)
		p.waitSignedIn("carol")
		p.waitJS(`!document.getElementById("slack-btn").hidden && document.querySelector(".card")`)
		checkNarrow(t, p)
	})
}

// TestLocalModeEnds: a page opened in local mode, when the first user is
// created (hitl user add while the server runs), returns to the sign-in
// view and says why.
func TestLocalModeEnds(t *testing.T) {
	turns.Parallel(t)
	srv := newServerWith(t, serverOptions{streamRecheck: 50 * time.Millisecond})
	p := openPage(t, srv)
	addUsers(t, srv.IDs)
	p.waitJS(`document.getElementById("login-notice").textContent.startsWith("This server now has users")`)
	p.signIn("alice", alicePassword)
	p.waitSignedIn("alice")
}
