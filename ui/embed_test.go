package ui_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/turns"
)

// hostSite is another site (another origin: localhost on its own port,
// where hitl is 127.0.0.1) whose chat pages embed <hitl-prompt>, with a
// strict Content-Security-Policy that lets in hitl's origin alone.
type hostSite struct {
	*httptest.Server
	origin  string // http://localhost:PORT
	hitlURL string // set once hitl runs, before a page is opened
	// pages are more pages, by name (docs.html: ...), set before one is
	// opened.
	pages map[string]string
	// built is a directory of more files (the framework pages' bundles).
	built string
}

// startHostSite serves ui/testdata/embed/ and the pages NAME.html, with
// {{HITL}} (its hitlURL), {{SESSION}}, {{TOKEN}} and {{THEME}} filled
// from the query.
func startHostSite(t *testing.T) *hostSite {
	t.Helper()
	dir := filepath.Join("testdata", "embed")
	site := &hostSite{pages: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{file}", func(w http.ResponseWriter, r *http.Request) {
		hitlURL := site.hitlURL
		hitlHost := strings.TrimPrefix(hitlURL, "http://")
		name := filepath.Base(r.PathValue("file"))
		data, err := os.ReadFile(filepath.Join(dir, name))
		if page, ok := site.pages[name]; ok {
			data, err = []byte(page), nil
		} else if err != nil && site.built != "" {
			data, err = os.ReadFile(filepath.Join(site.built, name))
		}
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Security-Policy", strings.Join([]string{
			"default-src 'self'",
			"script-src 'self' " + hitlURL,
			"style-src 'self' " + hitlURL,
			"connect-src 'self' " + hitlURL + " ws://" + hitlHost,
			"img-src 'self'",
			"object-src 'none'",
			"base-uri 'none'",
		}, "; "))
		switch filepath.Ext(name) {
		case ".html":
			q := r.URL.Query()
			page := strings.NewReplacer("{{HITL}}", hitlURL, "{{SESSION}}", q.Get("session"),
				"{{TOKEN}}", q.Get("token"), "{{THEME}}", q.Get("theme"), "{{APP}}", q.Get("app")).Replace(string(data))
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, page)
		case ".js":
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
			w.Write(data)
		case ".css":
			w.Header().Set("Content-Type", "text/css; charset=utf-8")
			w.Write(data)
		}
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(mux)
	hs.Listener.Close()
	hs.Listener = l
	hs.Start()
	t.Cleanup(hs.Close)
	site.Server, site.origin = hs, fmt.Sprintf("http://localhost:%d", l.Addr().(*net.TCPAddr).Port)
	return site
}

// mintEmbedToken mints an embed token for user and sessions as the chat
// site's backend does, with an admin token.
func mintEmbedToken(t *testing.T, srv *hitlServer, admin, user string, ttl int, sessions ...string) string {
	t.Helper()
	as := *srv
	as.token = admin
	code, data := as.call(t, http.MethodPost, "/api/v1/embed-tokens", map[string]any{"user": user, "session_ids": sessions, "ttl": ttl})
	if code != http.StatusCreated {
		t.Fatalf("mint an embed token: %d %s", code, data)
	}
	var tok struct{ Token string }
	if err := json.Unmarshal(data, &tok); err != nil {
		t.Fatal(err)
	}
	return tok.Token
}

// openHostPage opens the chat page NAME.html of site for session, with
// token, and waits for the element to be defined.
func openHostPage(t *testing.T, srv *hitlServer, site *hostSite, name, session, token, theme string, setup ...chromedp.Action[chromedp.Void]) *page {
	t.Helper()
	url := fmt.Sprintf("%s/%s.html?session=%s&token=%s&theme=%s", site.origin, name, session, token, theme)
	p := openTabAt(t, srv, url, true, 90*time.Second, setup...)
	p.waitJS(`customElements.get("hitl-prompt") !== undefined && !!document.querySelector("hitl-prompt")?.shadowRoot`)
	return p
}

// sr is a JavaScript expression for what sel matches in the prompt's
// shadow root.
func sr(sel string) string {
	return fmt.Sprintf(`document.querySelector("hitl-prompt").shadowRoot.querySelector(%s)`, js(sel))
}

// prompt is the selector of the prompt of interaction id.
func prompt(id string) string {
	return fmt.Sprintf(`article.hp-prompt[data-interaction-id=%q]`, id)
}

// waitPromptText waits until the prompt of id holds text.
func (p *page) waitPromptText(id, text string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf(`(%s?.textContent || "").includes(%s)`, sr(prompt(id)), js(text)))
}

// focusIn focuses what sel matches in the prompt of id.
func (p *page) focusIn(id, sel string) {
	p.t.Helper()
	p.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`%s.focus()`, sr(prompt(id)+" "+sel))))
	p.waitJS(fmt.Sprintf(`document.querySelector("hitl-prompt").shadowRoot.activeElement === %s`, sr(prompt(id)+" "+sel)))
}

// keys types text into the focused element.
func (p *page) keys(text string) {
	p.t.Helper()
	p.do(chromedp.KeyEvent(text))
}

// TestEmbedPages: a chat page on another origin embeds <hitl-prompt>:
// plain HTML with a <script type="module">, and the same chat written in
// React 19, Svelte 5 and Vue 3 (from the npm registry, compiled here). In
// each, alice's questions of the page's session appear inline and are
// answered there from the keyboard, and the agent's wait returns the
// answer (channel embed); an action is edited and approved there; a
// handoff is replied to there; a cancel, an expiry and an answer in the
// inbox show how each ended. The page's events follow; axe-core finds
// nothing serious inside the page; the page's --hitl-* properties and
// font restyle the prompt.
func TestEmbedPages(t *testing.T) {
	turns.Parallel(t)
	site := startHostSite(t)
	srv := newServerWith(t, serverOptions{auth: true, embedOrigins: []string{site.origin}})
	site.hitlURL = srv.URL
	site.built = buildFrameworkPages(t)
	admin := newToken(t, srv.IDs, "chat-backend", hitl.RoleAdmin)
	for _, app := range []string{"plain", "react", "svelte", "vue"} {
		t.Run(app, func(t *testing.T) {
			session := "chat-" + app
			token := mintEmbedToken(t, srv, admin, "alice", 600, session)
			page := "chat"
			if app == "plain" {
				page = "plain"
			}
			url := fmt.Sprintf("%s/%s.html?session=%s&token=%s&app=%s", site.origin, page, session, token, app)
			p := openTabAt(t, srv, url, true, 90*time.Second, emulateMedia("light"), recordCSP())
			p.waitJS(`!!document.querySelector("hitl-prompt")?.shadowRoot`)
			exercisePrompt(t, srv, p, session)
		})
	}
}

// buildFrameworkPages builds the React, Svelte and Vue chat pages
// (testdata/embed/build.mjs) into a temp dir and returns it.
func buildFrameworkPages(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join("testdata", "embed", "node_modules", "esbuild")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the frameworks are missing (%v); test.sh installs them from npm", err)
		}
		t.Skipf("framework pages skipped: %v (run ./test.sh, which installs them from npm)", err)
	}
	dir := t.TempDir()
	out, err := exec.Command("node", filepath.Join("testdata", "embed", "build.mjs"), dir).CombinedOutput()
	if err != nil {
		t.Fatalf("build the framework pages: %v\n%s", err, out)
	}
	return dir
}

// exercisePrompt runs the prompt of page p (alice's, for session) through
// every way a question goes and ends.
func exercisePrompt(t *testing.T, srv *hitlServer, p *page, session string) {
	t.Helper()
	// A question of another session never shows.
	elsewhere := srv.ask(t, map[string]any{"question": "Not for this chat", "session_id": session + "-other"})

	// Free text, answered from the keyboard.
	id := srv.ask(t, map[string]any{"question": "Which order should be refunded?", "session_id": session, "source_agent": "support-bot"})
	wait := srv.wait(t, id)
	p.waitPromptText(id, "Which order should be refunded?")
	p.focusIn(id, "textarea")
	p.keys("Order 1432")
	p.do(ctrlEnter())
	assertEmbedValue(t, awaitResult(t, wait), `"Order 1432"`)
	p.waitJS(fmt.Sprintf(`%s.dataset.state === "answered" && %s.dataset.here === "true"`, sr(prompt(id)), sr(prompt(id))))

	// An action: Edit, change the command, approve the edit.
	act := srv.ask(t, map[string]any{"interaction_type": "action", "session_id": session, "source_agent": "support-bot",
		"action": map[string]any{"name": "Bash", "args": map[string]any{"command": "refund --order 1432 --amount 80"}}})
	actWait := srv.wait(t, act)
	p.waitPromptText(act, "refund --order 1432 --amount 80")
	if n := eval[int](p, fmt.Sprintf(`%s.querySelectorAll(".btn-always").length`, sr(prompt(act)))); n != 0 {
		t.Errorf("the embedded action offers Always allow… (%d); it makes no rules", n)
	}
	p.focusIn(act, ".btn-edit")
	p.keys("\r")
	// A command without a schema is edited as text.
	p.waitJS(`document.querySelector("hitl-prompt").shadowRoot.activeElement?.name === "/command"`)
	p.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("hitl-prompt").shadowRoot.activeElement.select()`))
	p.keys(`refund --order 1432 --amount 40`)
	p.waitPromptText(act, "--amount 40")
	p.do(ctrlEnter())
	assertEmbedValue(t, awaitResult(t, actWait), `{"decision": "edit", "args": {"command": "refund --order 1432 --amount 40"}}`)
	p.waitPromptText(act, "Edited and approved")

	// A handoff: the agent's message, the note, a reply.
	ho := srv.ask(t, map[string]any{"interaction_type": "handoff", "session_id": session, "source_agent": "support-bot",
		"question": "I can't refund more than 50 €; a person needs to take over."})
	hoWait := srv.wait(t, ho)
	p.waitPromptText(ho, "The agent handed this conversation to a person — you can reply now.")
	p.waitPromptText(ho, "I can't refund more than 50 €")
	p.focusIn(ho, `textarea[aria-label="Your reply"]`)
	p.keys("Hi, I'm Alice. Refunding the 80 € now.")
	p.do(ctrlEnter())
	assertEmbedValue(t, awaitResult(t, hoWait), `"Hi, I'm Alice. Refunding the 80 € now."`)

	// Cancelled by the agent, expired, answered in the inbox.
	cancelled := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Send the survey?", "session_id": session})
	expiring := srv.ask(t, map[string]any{"question": "Anything else?", "session_id": session, "timeout": 2})
	inbox := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Close the ticket?", "session_id": session})
	p.waitPromptText(inbox, "Close the ticket?")
	srv.call(t, http.MethodPost, "/api/v1/interactions/"+cancelled+"/cancel", map[string]any{"reason": "the customer left"})
	if _, err := srv.Broker.Respond(opsPerson("alice"), inbox, json.RawMessage(`true`)); err != nil {
		t.Fatal(err)
	}
	p.waitPromptText(cancelled, "Cancelled by the agent: the customer left")
	p.waitPromptText(inbox, "Answered by alice in the inbox.")
	p.waitJSFor(fmt.Sprintf(`%s?.dataset.state === "expired"`, sr(prompt(expiring))), 30*time.Second)
	p.waitPromptText(expiring, "Expired")

	if eval[bool](p, sr(prompt(elsewhere))+" !== null") {
		t.Error("a question of another session shows in the prompt")
	}
	ended := eval[[]map[string]any](p, `window.hitlEvents.filter((e) => e.name === "hitl-ended").map((e) => ({id: e.interactionId, outcome: e.outcome}))`)
	want := map[string]string{id: "answered", act: "answered", ho: "answered", cancelled: "cancelled", expiring: "expired", inbox: "answered"}
	if len(ended) != len(want) {
		t.Errorf("hitl-ended events: %v, want one for each of %v", ended, want)
	}
	for _, e := range ended {
		if want[e["id"].(string)] != e["outcome"] {
			t.Errorf("hitl-ended %v, want outcome %s", e, want[e["id"].(string)])
		}
	}
	if n := eval[int](p, `window.hitlEvents.filter((e) => e.name === "hitl-question").length`); n != 6 {
		t.Errorf("%d hitl-question events, want 6", n)
	}

	// The host's theme: its accent colours the prompt's primary button,
	// its font is the prompt's.
	pending := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Refund the shipping as well?", "session_id": session, "source_agent": "support-bot",
		"context": "The parcel arrived **two weeks** late."})
	p.waitPromptText(pending, "Refund the shipping as well?")
	if bg := eval[string](p, fmt.Sprintf(`getComputedStyle(%s).backgroundColor`, sr(prompt(pending)+" .btn-primary"))); bg != "rgb(10, 125, 90)" {
		t.Errorf("the primary button is %s, want the host's --hitl-accent rgb(10, 125, 90)", bg)
	}
	if f := eval[string](p, fmt.Sprintf(`getComputedStyle(%s).fontFamily`, sr(prompt(pending)+" .hp-question"))); !strings.Contains(f, "Georgia") {
		t.Errorf("the question's font is %s, want the host's", f)
	}
	p.do(chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`))
	checkAxeInHost(t, p)
}

// recordCSP records in window.__csp every Content-Security-Policy
// violation of the page.
func recordCSP() chromedp.Action[chromedp.Void] {
	return onNewDocument(`window.__csp = []; document.addEventListener("securitypolicyviolation", (e) => window.__csp.push(e.violatedDirective + " " + e.sourceFile + ":" + e.lineNumber + " " + e.sample), true)`)
}

// checkAxeInHost checks that the host page (whose strict CSP the prompt
// has kept so far: recordCSP) has no serious or critical axe-core
// violation. axe-core itself sets inline styles as it measures, which
// the host's CSP refuses: those refusals, and only those, are not the
// prompt's.
func checkAxeInHost(t *testing.T, p *page) {
	t.Helper()
	if v := eval[[]string](p, `window.__csp`); len(v) > 0 {
		t.Errorf("the host page's CSP refused the prompt: %v", v)
	}
	p.mu.Lock()
	p.tolerated = func(text string) bool { return strings.Contains(text, "Applying inline style violates") }
	p.mu.Unlock()
	checkAxe(t, p)
}

// assertEmbedValue checks an answer given in the prompt: its value, by
// alice, on the embed channel.
func assertEmbedValue(t *testing.T, got interaction, want string) {
	t.Helper()
	if got.Status != "answered" || got.Result == nil {
		t.Fatalf("agent got status %q, want answered", got.Status)
	}
	var g, w any
	if err := json.Unmarshal(got.Result.Value, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) || got.Result.RespondedBy != "alice" || got.Result.Channel != "embed" {
		t.Errorf("the agent got %s by %s via %s, want %s by alice via embed", gb, got.Result.RespondedBy, got.Result.Channel, wb)
	}
}

// TestEmbedRefused: a page of an origin that is not an embed origin, a
// page without a token, with an expired token, or with a token for
// another session sees none of the session's questions and answers none.
func TestEmbedRefused(t *testing.T) {
	turns.Parallel(t)
	site := startHostSite(t)
	other := startHostSite(t) // not an embed origin
	srv := newServerWith(t, serverOptions{auth: true, embedOrigins: []string{site.origin}})
	site.hitlURL, other.hitlURL = srv.URL, srv.URL
	admin := newToken(t, srv.IDs, "chat-backend", hitl.RoleAdmin)
	good := mintEmbedToken(t, srv, admin, "alice", 600, "chat-1")
	otherSession := mintEmbedToken(t, srv, admin, "alice", 600, "chat-2")
	expired := mintEmbedToken(t, srv, admin, "alice", 1, "chat-1")
	id := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Refund order 1432?", "session_id": "chat-1"})
	time.Sleep(1100 * time.Millisecond) // the one-second token expires

	// Another origin: the script does not load, and the page's own
	// requests with a good token are refused by the browser (CORS) and by
	// hitl (the WebSocket's Origin).
	p := openTabAt(t, srv, fmt.Sprintf("%s/plain.html?session=chat-1&token=%s", other.origin, good), true, 60*time.Second)
	p.mu.Lock()
	p.tolerated = func(text string) bool { return strings.Contains(text, "CORS") }
	p.mu.Unlock()
	p.waitJS(`document.readyState === "complete"`)
	if eval[bool](p, `customElements.get("hitl-prompt") !== undefined`) {
		t.Error("the prompt's script loaded on a page of an origin that is not an embed origin")
	}
	res := eval[string](p, fmt.Sprintf(`(async () => {
		const out = [];
		try {
			await fetch(%s, {method: "POST", headers: {"Authorization": "Bearer " + %s, "Content-Type": "application/json"}, body: '{"value": true}'});
			out.push("answered");
		} catch { out.push("fetch refused"); }
		out.push(await new Promise((resolve) => {
			const ws = new WebSocket(%s, ["hitl-embed", %s]);
			ws.onopen = () => resolve("ws open");
			ws.onerror = () => resolve("ws refused");
		}));
		return out.join(", ");
	})()`, js(srv.URL+"/api/v1/interactions/"+id+"/respond"), js(good), js("ws"+strings.TrimPrefix(srv.URL, "http")+"/ws/userinfo?session_id=chat-1"), js(good)))
	if res != "fetch refused, ws refused" {
		t.Errorf("from another origin: %s; want both refused", res)
	}

	// The embed origin, without a token, with an expired one, with one for
	// another session: the prompt says it cannot show questions.
	for _, tc := range []struct{ name, token string }{{"no token", ""}, {"expired", expired}, {"another session", otherSession}} {
		p := openHostPage(t, srv, site, "plain", "chat-1", tc.token, "")
		p.waitJS(sr(".hp-status") + `.checkVisibility()`)
		if got := eval[string](p, sr(".hp-status")+".textContent"); !strings.Contains(got, "cannot be shown") {
			t.Errorf("%s: the prompt says %q", tc.name, got)
		}
		if n := eval[int](p, sr(".hp-list")+".children.length"); n != 0 {
			t.Errorf("%s: %d prompts shown", tc.name, n)
		}
	}
	if got := srv.status(t, id); got != hitl.StatusPending {
		t.Errorf("the question is %s, want pending", got)
	}
}

// TestEmbedLook: the prompt in a 320 px chat column, light and dark (the
// host's theme attribute and its own --hitl-* colours), has nothing
// sticking out and no serious axe-core finding; with
// HITL_UPDATE_SCREENSHOTS=1 it writes docs/embed-light.png and
// docs/embed-dark.png (at 420 px).
func TestEmbedLook(t *testing.T) {
	turns.Parallel(t)
	site := startHostSite(t)
	srv := newServerWith(t, serverOptions{auth: true, embedOrigins: []string{site.origin}})
	site.hitlURL = srv.URL
	admin := newToken(t, srv.IDs, "chat-backend", hitl.RoleAdmin)
	token := mintEmbedToken(t, srv, admin, "alice", 600, "chat-1")
	ids := []string{
		srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Refund 80 € for order 1432?", "session_id": "chat-1", "source_agent": "support-bot",
			"context": "The parcel arrived **two weeks** late; the customer paid 80 €.", "timeout": 900}),
		srv.ask(t, map[string]any{"interaction_type": "action", "session_id": "chat-1", "source_agent": "support-bot", "timeout": 900,
			"action": map[string]any{"name": "Bash", "description": "Issue the refund", "args": map[string]any{"command": "refund --order 1432 --amount 80"}}}),
		srv.ask(t, map[string]any{"interaction_type": "single_choice", "question": "Which refund method?", "session_id": "chat-1", "source_agent": "support-bot",
			"options": []map[string]any{{"key": "card", "label": "Card"}, {"key": "credit", "label": "Store credit"}}}),
	}
	for _, scheme := range []string{"light", "dark"} {
		t.Run(scheme, func(t *testing.T) {
			width := int64(320)
			if os.Getenv("HITL_UPDATE_SCREENSHOTS") != "" {
				width = 420
			}
			p := openHostPage(t, srv, site, "plain", "chat-1", token, scheme, chromedp.EmulateViewport(width, 1400), emulateMedia(scheme), recordCSP())
			for _, id := range ids {
				p.waitJS(sr(prompt(id)) + "?.checkVisibility()")
			}
			wide := eval[[]string](p, fmt.Sprintf(`[...document.querySelector("hitl-prompt").shadowRoot.querySelectorAll("*")].filter((e) => e.getClientRects().length && e.getBoundingClientRect().right > %d + 1).map((e) => e.tagName + "." + e.className).slice(0, 5)`, width))
			if len(wide) > 0 {
				t.Errorf("past the right edge at %d px: %v", width, wide)
			}
			if got := eval[int](p, `document.documentElement.scrollWidth`); got > int(width) {
				t.Errorf("the page is %d px wide at %d px", got, width)
			}
			bg := eval[string](p, fmt.Sprintf(`getComputedStyle(%s).backgroundColor`, sr(prompt(ids[0])+" .btn-primary")))
			if want := map[string]string{"light": "rgb(10, 125, 90)", "dark": "rgb(47, 191, 143)"}[scheme]; bg != want {
				t.Errorf("primary button %s, want the host's %s", bg, want)
			}
			checkAxeInHost(t, p)
			if os.Getenv("HITL_UPDATE_SCREENSHOTS") != "" {
				png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
				if err != nil {
					t.Fatal(err)
				}
				writeDoc(t, "embed-"+scheme+".png", png)
			}
		})
	}
}

// TestEmbedDocsSnippet: the embed example of docs/embed.md, as it is
// written (hitl's URL and the token filled in), works in a page of an
// embed origin: a question of chat-1 shows and is approved from the
// keyboard.
func TestEmbedDocsSnippet(t *testing.T) {
	turns.Parallel(t)
	doc, err := os.ReadFile(filepath.Join("..", "docs", "embed.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "<!-- snippet: embed-page -->\n```html\n")
	snippet, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/embed.md has no embed-page snippet")
	}
	site := startHostSite(t)
	srv := newServerWith(t, serverOptions{auth: true, embedOrigins: []string{site.origin}})
	site.hitlURL = srv.URL
	admin := newToken(t, srv.IDs, "chat-backend", hitl.RoleAdmin)
	token := mintEmbedToken(t, srv, admin, "alice", 600, "chat-1")
	body := strings.NewReplacer("https://hitl.example", srv.URL, "hitl_embed_…", token).Replace(snippet)
	site.pages["docs.html"] = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Chat</title></head><body><main>` + body + `</main></body></html>`

	p := openTabAt(t, srv, site.origin+"/docs.html", true, 60*time.Second, recordCSP())
	p.waitJS(`customElements.get("hitl-prompt") !== undefined`)
	id := srv.ask(t, map[string]any{"interaction_type": "approval", "question": "Refund order 1432?", "session_id": "chat-1"})
	wait := srv.wait(t, id)
	p.waitPromptText(id, "Refund order 1432?")
	p.focusIn(id, ".btn-approve")
	p.keys("\r")
	assertEmbedValue(t, awaitResult(t, wait), `true`)
	p.waitPromptText(id, "Answered here.")
	if v := eval[[]string](p, `window.__csp`); len(v) > 0 {
		t.Errorf("CSP violations: %v", v)
	}
}

// TestEmbedFormAndChoices: the prompt's form refuses what its schema
// refuses, saying where, and sends what it accepts; several of N sends
// the options picked. Both answered from the keyboard inside the host's
// page.
func TestEmbedFormAndChoices(t *testing.T) {
	turns.Parallel(t)
	site := startHostSite(t)
	srv := newServerWith(t, serverOptions{auth: true, embedOrigins: []string{site.origin}})
	site.hitlURL = srv.URL
	admin := newToken(t, srv.IDs, "chat-backend", hitl.RoleAdmin)
	const session = "chat-forms"
	token := mintEmbedToken(t, srv, admin, "alice", 600, session)
	p := openTabAt(t, srv, fmt.Sprintf("%s/plain.html?session=%s&token=%s&app=plain", site.origin, session, token), true, 60*time.Second, emulateMedia("light"))
	p.waitJS(`!!document.querySelector("hitl-prompt")?.shadowRoot`)

	form := srv.ask(t, map[string]any{"interaction_type": "form", "question": "Where should the refund go?", "session_id": session,
		"form_schema": json.RawMessage(`{"type": "object", "required": ["iban", "amount"], "properties": {
			"iban": {"type": "string", "title": "IBAN", "minLength": 15},
			"amount": {"type": "integer", "title": "Amount", "minimum": 1, "maximum": 80}}}`)})
	formWait := srv.wait(t, form)
	p.waitPromptText(form, "Where should the refund go?")
	p.focusIn(form, `[name="/iban"]`)
	p.keys("FR76")
	p.focusIn(form, `[name="/amount"]`)
	p.keys("500")
	p.do(ctrlEnter())
	p.waitPromptText(form, "Some fields need attention.")
	if st := srv.status(t, form); st != hitl.StatusPending {
		t.Fatalf("a form the schema refuses was sent: %s", st)
	}
	p.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { for (const n of ["/iban", "/amount"]) %s.querySelector('[name="' + n + '"]').value = "" })()`, sr(prompt(form)))))
	p.focusIn(form, `[name="/iban"]`)
	p.keys("FR7630006000011234567890189")
	p.focusIn(form, `[name="/amount"]`)
	p.keys("80")
	p.do(ctrlEnter())
	assertEmbedValue(t, awaitResult(t, formWait), `{"iban": "FR7630006000011234567890189", "amount": 80}`)

	several := srv.ask(t, map[string]any{"interaction_type": "multi_choice", "question": "Which items were damaged?", "session_id": session,
		"options": []string{"Lamp", "Vase", "Frame"}})
	severalWait := srv.wait(t, several)
	p.waitPromptText(several, "Which items were damaged?")
	p.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const boxes = %s.querySelectorAll('input[name="choices"]'); boxes[0].click(); boxes[2].click(); boxes[2].focus() })()`, sr(prompt(several)))))
	p.do(ctrlEnter())
	got := awaitResult(t, severalWait)
	if got.Status != "answered" || got.Result == nil {
		t.Fatalf("several of N: %s", got.Status)
	}
	var keys []string
	if err := json.Unmarshal(got.Result.Value, &keys); err != nil || len(keys) != 2 || keys[0] == keys[1] {
		t.Errorf("several of N answered %s, want the first and the third option", got.Result.Value)
	}
}
