package ui_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/turns"
)

// openRules opens the rules dialog from the top bar and waits until its
// list is loaded.
func (p *page) openRules() {
	p.t.Helper()
	p.clickTopBar("rules-btn")
	p.waitRules()
}

// waitRules waits until the rules dialog is open, with its list loaded.
func (p *page) waitRules() {
	p.t.Helper()
	p.waitJS(`document.getElementById("rules-dialog").open && document.getElementById("rules-list").getAttribute("aria-busy") === "false" &&
		document.getElementById("rules-empty").textContent !== "Loading rules…" && document.getElementById("rules-dialog").contains(document.activeElement)`)
}

// ruleItems returns the text of each rule the dialog lists.
func (p *page) ruleItems() []string {
	p.t.Helper()
	return eval[[]string](p, `[...document.querySelectorAll("#rules-list > li")].map(li => li.textContent)`)
}

// TestRulesView: the rules dialog, from the top bar. A person sees the
// rules they made with "Always allow…", an admin every rule; revoking one
// by keyboard takes it out of force (and out of the list, the focus
// moving on), and the revoked rules can be shown; Escape closes the dialog
// and gives the focus back to the Rules button.
func TestRulesView(t *testing.T) {
	turns.Parallel(t)
	srv := newServerWith(t, serverOptions{auth: true})
	admin := *srv
	admin.token = newToken(t, srv.IDs, "ops-admin", hitl.RoleAdmin)
	if code, body := admin.call(t, http.MethodPost, "/api/v1/rules", map[string]any{
		"effect": "deny", "source_agent": "*", "action_name": "Write",
		"match": map[string]any{"arg": "file_path", "glob": "/etc/**"}, "message": "not in /etc",
	}); code != http.StatusCreated {
		t.Fatalf("create rule: %d %s", code, body)
	}
	id := srv.askAction(t, "Bash", map[string]any{"command": "make test -j4"}, nil)

	alice := openSignIn(t, srv)
	alice.signIn("alice", alicePassword)
	alice.waitSignedIn("alice")
	alice.waitCard(id)
	alice.click(id, ".btn-always")
	alice.click(id, ".btn-submit")
	alice.waitCardText(id, "Approved by alice via the web inbox.")

	alice.openRules()
	items := alice.ruleItems()
	if len(items) != 1 {
		t.Fatalf("alice sees %d rules, want her own: %q", len(items), items)
	}
	for _, want := range []string{"Allow", "Bash", "from claude-code", "when command starts with “make test”", "Made by alice", "expires "} {
		if !strings.Contains(items[0], want) {
			t.Errorf("alice's rule %q lacks %q", items[0], want)
		}
	}

	carol := openSignIn(t, srv)
	carol.signIn("carol", carolPassword)
	carol.waitSignedIn("carol")
	carol.openRules()
	items = carol.ruleItems()
	if len(items) != 2 {
		t.Fatalf("carol, an admin, sees %d rules, want 2: %q", len(items), items)
	}
	for _, want := range []string{"Deny", "Write", "from every agent", "when file_path matches “/etc/**”", "Reason not in /etc", "Made by ops-admin"} {
		if !strings.Contains(items[0], want) {
			t.Errorf("the admin's rule %q lacks %q", items[0], want)
		}
	}

	// Alice revokes hers, by keyboard: the dialog opened on Close; Tab
	// goes to the filter, then to the rule's Revoke.
	alice.do(chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Tab))
	if got := eval[string](alice, `document.activeElement.getAttribute("aria-label")`); got != "Revoke rule: Allow Bash from claude-code when command starts with “make test”." {
		t.Fatalf("focus on %q after two Tabs, want the Revoke button", got)
	}
	alice.do(chromedp.KeyEvent(kb.Enter))
	alice.waitJS(`document.getElementById("rules-result").textContent === "Revoked: Allow Bash from claude-code when command starts with “make test”."`)
	alice.waitJS(`document.activeElement.id === "rules-done" && document.querySelectorAll("#rules-list > li").length === 0`)
	if got := alice.text("#rules-empty"); !strings.HasPrefix(got, "No rules in force.") {
		t.Errorf("empty list says %q", got)
	}
	var revoked []rule
	for _, r := range admin.rules(t) {
		if r.RevokedAt != nil {
			revoked = append(revoked, r)
		}
	}
	if len(revoked) != 1 || revoked[0].RevokedBy != "alice" || revoked[0].ActionName != "Bash" {
		t.Errorf("revoked rules %+v, want alice's Bash rule, revoked by her", revoked)
	}
	// A new identical call is asked again.
	again := srv.askAction(t, "Bash", map[string]any{"command": "make test -j4"}, nil)
	if got := srv.status(t, again); got != "pending" {
		t.Errorf("after the revoke, the same call is %s, want pending", got)
	}

	// The revoked rules, shown on demand (Space on the filter).
	alice.do(chromedp.Evaluate[chromedp.Void](`document.getElementById("rules-all").focus()`), chromedp.KeyEvent(" "))
	alice.waitRules()
	alice.waitJS(`document.querySelectorAll("#rules-list > li").length === 1`)
	items = alice.ruleItems()
	for _, want := range []string{"Revoked", "revoked by alice"} {
		if !strings.Contains(items[0], want) {
			t.Errorf("the revoked rule %q lacks %q", items[0], want)
		}
	}
	if n := eval[int](alice, `document.querySelectorAll("#rules-list .btn-revoke").length`); n != 0 {
		t.Errorf("a revoked rule has %d Revoke buttons", n)
	}

	// Escape closes the dialog. In one clean-clone CI run under load the key
	// was pressed and the dialog stayed open for 20 s (never seen alone); a
	// person presses it again, and so does the test, at most three times.
	for try := 1; ; try++ {
		alice.do(chromedp.KeyEvent(kb.Escape))
		closed, err := chromedp.Run(alice.ctx, chromedp.Poll[bool](`!document.getElementById("rules-dialog").open`,
			chromedp.WithPollingInterval(40*time.Millisecond), chromedp.WithPollingTimeout(5*time.Second)))
		if err == nil && closed {
			break
		}
		if try == 3 {
			t.Fatalf("the rules dialog is still open after Escape three times: %v", err)
		}
	}
	alice.waitJS(`!document.getElementById("rules-dialog").open && document.activeElement.id === "rules-btn"`)
	// A question that arrives now is announced, and leaves the focus where
	// the person is: on the button.
	alice.do(chromedp.Evaluate[chromedp.Void](`document.getElementById("announcer").textContent = ""`))
	next := srv.askAction(t, "Bash", map[string]any{"command": "make lint"}, nil)
	alice.waitCard(next)
	alice.waitJS(`document.getElementById("announcer").textContent.includes("from claude-code: make lint")`)
	if got := alice.focusName(); got != "rules-btn" {
		t.Errorf("a new question took the focus from the Rules button to %s", got)
	}
	if got := eval[[]string](alice, `[...document.querySelectorAll("#topbar button:not([hidden])")].map(b => b.getAttribute("aria-label") || b.textContent)`); !slices.Contains(got, "Rules") {
		t.Errorf("top bar buttons %q lack Rules", got)
	}
}

// TestRulesNarrow: signed in as an admin on a 375 px phone, the top bar
// keeps the Rules button beside the tabs, and the rules dialog fits and
// passes axe-core.
func TestRulesNarrow(t *testing.T) {
	turns.Parallel(t)
	srv := newServerWith(t, serverOptions{auth: true})
	admin := *srv
	admin.token = newToken(t, srv.IDs, "ops-admin", hitl.RoleAdmin)
	if code, body := admin.call(t, http.MethodPost, "/api/v1/rules", map[string]any{
		"effect": "allow", "source_agent": "claude-code", "action_name": "Read", "ttl_seconds": 3600,
	}); code != http.StatusCreated {
		t.Fatalf("create rule: %d %s", code, body)
	}
	id := srv.askAction(t, "Bash", map[string]any{"command": "make test"}, nil) // the Inbox tab counts it
	p := openSignIn(t, srv, chromedp.EmulateViewport(375, 812, chromedp.EmulateMobile), emulateMedia("light"))
	p.signIn("carol", carolPassword)
	p.waitSignedIn("carol")
	p.waitCard(id)
	p.waitTopBar("slack-btn", "rules-btn")
	checkNarrow(t, p)
	// Two rows: the brand and the account, then the tabs and the buttons.
	if top, tabs := eval[float64](p, `document.getElementById("rules-btn").getBoundingClientRect().top`),
		eval[float64](p, `document.getElementById("tabs").getBoundingClientRect().top`); top-tabs > 8 {
		t.Errorf("the Rules button is %.0f px below the tabs: the top bar takes a third row", top-tabs)
	}
	p.openRules()
	if items := p.ruleItems(); len(items) != 1 || !strings.Contains(items[0], "for any arguments") {
		t.Errorf("rules %q, want the admin's rule for any arguments", items)
	}
	checkNarrow(t, p)
	checkAxe(t, p)
}
