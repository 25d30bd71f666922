package ui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/auth"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/server"
	"github.com/hitl-sh/hitl/slack"
	"github.com/hitl-sh/hitl/sqlite"
	"golang.org/x/time/rate"
)

// chromiumPath is Debian's Chromium, which test.sh installs.
const chromiumPath = "/usr/bin/chromium"

// One browser for the whole test binary; each test opens its own tab.
var browser struct {
	once   sync.Once
	ctx    context.Context
	cancel func()
	err    error
	dir    string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if browser.cancel != nil {
		browser.cancel()
	}
	if browser.dir != "" {
		os.RemoveAll(browser.dir)
	}
	os.Exit(code)
}

// requireChromium skips the test when Chromium is missing, except in CI
// (CI is set), where a missing browser is a failure.
func requireChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing (CI is set, so this fails): test.sh installs the chromium package", chromiumPath)
		}
		t.Skipf("browser test skipped: %s is missing (run ./test.sh, which installs the chromium package)", chromiumPath)
	}
}

// startBrowser starts the shared headless Chromium once.
func startBrowser() (context.Context, error) {
	browser.once.Do(func() {
		dir, err := os.MkdirTemp("", "hitl-ui-chromium-")
		if err != nil {
			browser.err = err
			return
		}
		browser.dir = dir
		allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
			chromedp.ExecPath(chromiumPath),
			chromedp.Headless,
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.NoFirstRun,
			chromedp.NoDefaultBrowserCheck,
			chromedp.UserDataDir(dir),
			chromedp.WindowSize(1100, 900),
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.Flag("disable-quic", true),
			chromedp.Flag("disable-extensions", true),
			chromedp.Flag("disable-dev-shm-usage", true),
			chromedp.Flag("disable-background-timer-throttling", true),
			chromedp.Flag("disable-backgrounding-occluded-windows", true),
			chromedp.Flag("disable-renderer-backgrounding", true),
			chromedp.Flag("disable-features", "Translate,MediaRouter,OptimizationHints"),
			chromedp.Flag("metrics-recording-only", true),
			chromedp.Flag("password-store", "basic"),
			chromedp.Flag("hide-scrollbars", true),
			chromedp.Flag("mute-audio", true),
			chromedp.Flag("lang", "en-US"),
		)
		ctx, cancelBrowser := chromedp.NewContext(allocCtx)
		browser.ctx = ctx
		browser.cancel = func() { cancelBrowser(); cancelAlloc() }
		browser.err = chromedp.Do(ctx) // starts the browser
	})
	return browser.ctx, browser.err
}

// hitlServer is a real hitl server over a SQLite file in a temp dir, with
// the Slack channel (talking to a fake Slack), behind a middleware that
// can break the WebSocket and the respond endpoint.
type hitlServer struct {
	*httptest.Server
	Broker *broker.Broker
	// IDs holds the users, tokens and sessions.
	IDs    hitl.Identities
	Slack  *fakeSlack
	faults *faults
	// token is the agent's API token once authentication is on; the
	// test's agent calls send it.
	token string
}

// Test users of a server with authentication on (serverOptions.auth).
const (
	alicePassword = "alice-correct-horse" // alice: responder
	bobPassword   = "bob-battery-staple"  // bob: responder, group ops
	carolPassword = "carol-admin-secret"  // carol: admin
)

// serverOptions configure newServerWith; the zero value is a server in
// local mode (no users: no login), as hitl serve starts.
type serverOptions struct {
	// auth adds the users alice, bob and carol and an agent token, so every
	// request needs credentials.
	auth bool
	// streamRecheck is how often live streams check their credentials;
	// 0 means the server's default (30 s).
	streamRecheck time.Duration
	// loginRate and loginBurst limit sign-ins per address; 0 means no
	// limit.
	loginRate  rate.Limit
	loginBurst int
	// slack is what flags and HITL_SLACK_* variables would set.
	slack slack.Settings
	// noSecretKey runs the Slack channel without a key to seal secrets.
	noSecretKey bool
	// push, email and webhooks run the Web Push and email channels and
	// the webhooks (channels_test.go).
	push, email, webhooks bool
}

func newServer(t *testing.T) *hitlServer {
	t.Helper()
	return newServerWith(t, serverOptions{})
}

func newServerWith(t *testing.T, o serverOptions) *hitlServer {
	t.Helper()
	store, err := sqlite.Open(filepath.Join(t.TempDir(), "hitl.db"), nil)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	srv := &hitlServer{IDs: store, Slack: newFakeSlack(t)}
	if o.auth {
		addUsers(t, store)
		srv.token = newToken(t, store, "build-bot", hitl.RoleAgent)
	}
	b := broker.New(store, nil)
	if err := b.Start(context.Background()); err != nil {
		t.Fatalf("start broker: %v", err)
	}
	var cipher *slack.Cipher
	if !o.noSecretKey {
		if cipher, err = slack.NewCipher(bytes.Repeat([]byte{7}, slack.KeySize)); err != nil {
			t.Fatal(err)
		}
	}
	sl, err := slack.New(b, store, &slack.Options{Identities: store, Settings: o.slack, Cipher: cipher, APIURL: srv.Slack.URL + "/"})
	if err != nil {
		t.Fatalf("new slack: %v", err)
	}
	if err := sl.Start(context.Background()); err != nil {
		t.Fatalf("start slack: %v", err)
	}
	loginRate, loginBurst := o.loginRate, o.loginBurst
	if loginRate == 0 {
		loginRate = rate.Inf
	}
	opts := &server.Options{Slack: sl, Auth: server.AuthOptions{
		Identities:    store,
		StreamRecheck: o.streamRecheck, LoginRate: loginRate, LoginBurst: loginBurst,
	}}
	addChannels(t, b, store, o, opts)
	f := &faults{}
	ts := httptest.NewUnstartedServer(f.wrap(hitltest.ValidateResponses(t, server.New(b, opts).Handler())))
	// Hijacked connections are the WebSockets; the test can cut them.
	ts.Config.ConnState = func(c net.Conn, state http.ConnState) {
		if state == http.StateHijacked {
			f.mu.Lock()
			f.sockets = append(f.sockets, c)
			f.mu.Unlock()
		}
	}
	ts.Start()
	srv.Server, srv.Broker, srv.faults = ts, b, f
	t.Cleanup(func() {
		b.Close()
		srv.Close()
		sl.Close()
		store.Close()
	})
	return srv
}

// addUsers adds alice, bob and carol, as hitl user add would.
func addUsers(t *testing.T, ids hitl.Identities) {
	t.Helper()
	for _, u := range []struct {
		name, password string
		groups         []string
		admin          bool
	}{
		{"alice", alicePassword, nil, false},
		{"bob", bobPassword, []string{"ops"}, false},
		{"carol", carolPassword, []string{"ops"}, true},
	} {
		hash, err := auth.HashPassword(u.password)
		if err != nil {
			t.Fatal(err)
		}
		if err := ids.CreateUser(context.Background(), &hitl.User{Name: u.name, Groups: u.groups, Admin: u.admin, PasswordHash: hash}); err != nil {
			t.Fatalf("create user %s: %v", u.name, err)
		}
	}
}

// newToken creates an API token, as hitl token create would, and returns
// its secret.
func newToken(t *testing.T, ids hitl.Identities, name string, role hitl.Role) string {
	t.Helper()
	secret, hash, prefix := auth.NewToken()
	tok := &hitl.Token{ID: auth.NewID(), Name: name, Role: role, Prefix: prefix, Hash: hash}
	if err := ids.CreateToken(context.Background(), tok); err != nil {
		t.Fatalf("create token %s: %v", name, err)
	}
	return secret
}

// faults breaks parts of the server on demand.
type faults struct {
	mu         sync.Mutex
	wsDown     bool
	sockets    []net.Conn
	failPosts  int
	wsRequests int      // requests for /ws seen
	wsQueries  []string // their queries
	noResume   bool     // /ws is served as if it could not resume
	heldPosts  chan struct{}
}

func (f *faults) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		if r.URL.Path == "/ws" {
			f.wsRequests++
			f.wsQueries = append(f.wsQueries, r.URL.RawQuery)
			if f.noResume {
				q := r.URL.Query()
				q.Del("after")
				r.URL.RawQuery = q.Encode()
			}
		}
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/api/v1/agents/hitl/respond" && f.heldPosts != nil:
			held := f.heldPosts
			f.mu.Unlock()
			holdResponse(w, r, next, held)
			return
		case r.URL.Path == "/ws" && f.wsDown:
			f.mu.Unlock()
			http.Error(w, "down for the test", http.StatusServiceUnavailable)
			return
		case r.Method == http.MethodPost && r.URL.Path == "/api/v1/agents/hitl/respond" && f.failPosts > 0:
			f.failPosts--
			f.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":{"code":"unavailable","message":"down for the test"}}`)
			return
		}
		f.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// setWS closes every open WebSocket and refuses new ones while down.
func (f *faults) setWS(down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.wsDown = down
	if down {
		for _, c := range f.sockets {
			c.Close()
		}
		f.sockets = nil
	}
}

// holdResponse serves r into a recorder, so the request has its full
// effect at once, and sends the response only once held is closed.
func holdResponse(w http.ResponseWriter, r *http.Request, next http.Handler, held <-chan struct{}) {
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, r)
	select {
	case <-held:
	case <-r.Context().Done():
		return
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// holdPosts makes answers take effect at once but their responses wait
// until release is called.
func (f *faults) holdPosts() (release func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	held := make(chan struct{})
	f.heldPosts = held
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.heldPosts = nil
		close(held)
	}
}

// setNoResume makes the server ignore where a reconnecting page resumes
// from (as after its database was replaced): it replays everything.
func (f *faults) setNoResume(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.noResume = on
}

// wsQueryLog returns the queries of the requests for /ws seen.
func (f *faults) wsQueryLog() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.wsQueries...)
}

// wsCount returns how many requests for /ws the server has seen.
func (f *faults) wsCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.wsRequests
}

// failNextPosts makes the next n answers fail with 503.
func (f *faults) failNextPosts(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failPosts = n
}

// interaction is what the tests read of an interaction.
type interaction struct {
	ID     string `json:"interaction_id"`
	Status string `json:"status"`
	Result *struct {
		Value       json.RawMessage `json:"value"`
		RespondedBy string          `json:"responded_by"`
		Channel     string          `json:"channel"`
	} `json:"result"`
}

// call sends a JSON request and returns the status and body.
func (s *hitlServer) call(t *testing.T, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return resp.StatusCode, data
}

// ask creates an interaction as an agent would and returns its id.
func (s *hitlServer) ask(t *testing.T, req map[string]any) string {
	t.Helper()
	if _, ok := req["source_agent"]; !ok {
		req["source_agent"] = "test-agent"
	}
	status, data := s.call(t, http.MethodPost, "/api/v1/interactions", req)
	if status != http.StatusCreated {
		t.Fatalf("ask: status %d, want 201; body %s", status, data)
	}
	var in interaction
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatalf("ask: decode %s: %v", data, err)
	}
	return in.ID
}

// status returns an interaction's status, read by the agent.
func (s *hitlServer) status(t *testing.T, id string) hitl.Status {
	t.Helper()
	code, data := s.call(t, http.MethodGet, "/api/v1/interactions/"+id, nil)
	var in interaction
	if err := json.Unmarshal(data, &in); code != http.StatusOK || err != nil {
		t.Fatalf("get %s: status %d, %s", id, code, data)
	}
	return hitl.Status(in.Status)
}

// wait starts the agent's long-poll for id; the channel yields the
// interaction once it is no longer pending.
func (s *hitlServer) wait(t *testing.T, id string) <-chan interaction {
	t.Helper()
	ch := make(chan interaction, 1)
	errs := make(chan error, 1)
	go func() {
		for {
			req, err := http.NewRequest(http.MethodGet, s.URL+"/api/v1/interactions/"+id+"/wait?timeout=60", nil)
			if err != nil {
				errs <- err
				return
			}
			if s.token != "" {
				req.Header.Set("Authorization", "Bearer "+s.token)
			}
			resp, err := s.Client().Do(req)
			if err != nil {
				errs <- err
				return
			}
			var in interaction
			err = json.NewDecoder(resp.Body).Decode(&in)
			resp.Body.Close()
			if err != nil {
				errs <- err
				return
			}
			if in.Status != "pending" {
				ch <- in
				return
			}
		}
	}()
	out := make(chan interaction, 1)
	go func() {
		select {
		case in := <-ch:
			out <- in
		case err := <-errs:
			out <- interaction{Status: "error: " + err.Error()}
		}
	}()
	return out
}

// awaitResult reads the agent's result, failing after a while.
func awaitResult(t *testing.T, ch <-chan interaction) interaction {
	t.Helper()
	select {
	case in := <-ch:
		return in
	case <-time.After(30 * time.Second):
		t.Fatal("the agent's wait did not return within 30s")
		return interaction{}
	}
}

// page is one browser tab on a server.
type page struct {
	t   *testing.T
	ctx context.Context
	srv *hitlServer

	mu       sync.Mutex
	problems []string // CSP violations and uncaught exceptions
}

// openPage opens a new tab, optionally runs setup steps before loading
// the inbox, loads it and waits until it is live.
func openPage(t *testing.T, srv *hitlServer, setup ...chromedp.Action[chromedp.Void]) *page {
	t.Helper()
	p := openTab(t, srv, false, setup...)
	p.waitJS(`document.getElementById("conn").dataset.state === "live"`)
	return p
}

// openSignIn opens the page in a browser context of its own (its own
// cookies: one person signed in per context) and waits for the sign-in
// view.
func openSignIn(t *testing.T, srv *hitlServer, setup ...chromedp.Action[chromedp.Void]) *page {
	t.Helper()
	p := openTab(t, srv, true, setup...)
	p.waitJS(`!document.getElementById("view-login").hidden && document.getElementById("login-form").checkVisibility()`)
	return p
}

// openTab opens a new tab, in a new browser context when isolated, runs
// setup steps and loads the inbox.
func openTab(t *testing.T, srv *hitlServer, isolated bool, setup ...chromedp.Action[chromedp.Void]) *page {
	t.Helper()
	return openTabWithin(t, srv, isolated, 60*time.Second, setup...)
}

// openTabWithin is openTab for a tab that may stay open for timeout.
func openTabWithin(t *testing.T, srv *hitlServer, isolated bool, timeout time.Duration, setup ...chromedp.Action[chromedp.Void]) *page {
	t.Helper()
	requireChromium(t)
	bctx, err := startBrowser()
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	var opts []chromedp.ContextOption
	if isolated {
		opts = append(opts, chromedp.WithNewBrowserContext())
	}
	tabCtx, cancelTab := chromedp.NewContext(bctx, opts...)
	if err := chromedp.Do(tabCtx); err != nil {
		cancelTab()
		t.Fatalf("open tab: %v", err)
	}
	ctx, cancelTimeout := context.WithTimeout(tabCtx, timeout)
	p := &page{t: t, ctx: ctx, srv: srv}
	messages := chromedp.Console(tabCtx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			text := m.String()
			if m.IsException() || strings.Contains(text, "Content Security Policy") || strings.Contains(text, "Refused to") {
				p.mu.Lock()
				p.problems = append(p.problems, text)
				p.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		<-done
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, m := range p.problems {
			t.Errorf("browser console: %s", m)
		}
	})
	p.do(setup...)
	p.do(chromedp.Navigate(srv.URL + "/"))
	return p
}

// do runs browser steps, failing the test on error.
func (p *page) do(steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if len(steps) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		p.t.Fatalf("browser: %v", err)
	}
}

// waitJS waits until the JavaScript expression is truthy.
func (p *page) waitJS(expr string) {
	p.t.Helper()
	_, err := chromedp.Run(p.ctx, chromedp.Poll[chromedp.Void](expr,
		chromedp.WithPollingInterval(40*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		p.t.Fatalf("waiting for %s: %v", expr, err)
	}
}

// eval evaluates a JavaScript expression and decodes its value.
func eval[T any](p *page, expr string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// card is the CSS selector of the card of interaction id.
func card(id string) string {
	return fmt.Sprintf(`article.card[data-id=%q]`, id)
}

// js quotes s as a JavaScript string literal.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// waitCardText waits until the card of id contains text.
func (p *page) waitCardText(id, text string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf(`(document.querySelector(%s)?.textContent || "").includes(%s)`, js(card(id)), js(text)))
}

// waitCardGone waits until the card of id has left the page.
func (p *page) waitCardGone(id string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf(`!document.querySelector(%s)`, js(card(id))))
}

// waitCard waits until the card of id is on the page.
func (p *page) waitCard(id string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf(`document.querySelector(%s)?.checkVisibility()`, js(card(id))))
}

// ctrlEnter presses Ctrl+Enter in the focused element.
func ctrlEnter() chromedp.Action[chromedp.Void] {
	return chromedp.KeyEvent("\r", chromedp.KeyModifiers(chromedp.ModifierCtrl))
}
