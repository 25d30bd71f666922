package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/slack-go/slack/slacktest"
)

// A fake Slack: the Web API methods hitl calls, on slacktest's server
// (or in process, for tests in a synctest bubble), and a Socket Mode
// WebSocket server that counts its connections.

const (
	testBotToken = "xoxb-1111-2222-abcdefghijkl"
	testAppToken = "xapp-1-A111-3333-mnopqrstuvwx"
	testChannel  = "C0TEST0001"
	testSecret   = "8f742231b10e8888abcd99yyyzzz85a5"
)

// apiCall is one Web API call the fake received.
type apiCall struct {
	method string
	token  string
	form   url.Values
	body   map[string]any // JSON bodies (views.open)
}

// blocks returns the call's blocks as JSON text without HTML escapes
// (slack-go writes < as \u003c), for matching.
func (c apiCall) blocks() string {
	var v any
	if err := json.Unmarshal([]byte(c.form.Get("blocks")), &v); err != nil {
		return c.form.Get("blocks")
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(b.String())
}

type fakeSlack struct {
	t   *testing.T
	mux *http.ServeMux

	mu       sync.Mutex
	calls    []apiCall
	changed  chan struct{} // closed and replaced on every call
	users    map[string]string
	tokens   map[string]bool // accepted bot and app tokens
	nextTS   int
	failPost string // error chat.postMessage answers with, when set

	// Socket Mode.
	wsMu     sync.Mutex
	wsURL    string
	conns    map[*websocket.Conn]string // open connections and their app token
	opened   int                        // connections ever accepted
	acks     []json.RawMessage
	wsChange chan struct{}
}

func newFake(t *testing.T) *fakeSlack {
	f := &fakeSlack{
		t: t, mux: http.NewServeMux(), changed: make(chan struct{}), wsChange: make(chan struct{}),
		users:  map[string]string{},
		tokens: map[string]bool{testBotToken: true, testAppToken: true},
		conns:  map[*websocket.Conn]string{},
	}
	f.routes(func(p string, h http.HandlerFunc) { f.mux.HandleFunc(p, h) })
	return f
}

// serve starts the fake on slacktest's HTTP server and returns its API URL.
func (f *fakeSlack) serve() string {
	srv := slacktest.NewTestServer(func(c slacktest.Customize) { f.routes(c.Handle) })
	srv.Start()
	f.t.Cleanup(srv.Stop)
	f.wsMu.Lock()
	f.wsURL = "ws://" + srv.ServerAddr + "/socket"
	f.wsMu.Unlock()
	f.t.Cleanup(f.closeSockets)
	return srv.GetAPIURL()
}

// inProcess returns an HTTP client that reaches the fake without a
// network, for synctest bubbles (where time only moves when every
// goroutine is blocked on something the bubble controls).
func (f *fakeSlack) inProcess() *http.Client {
	return &http.Client{Transport: handlerTransport{f.mux}}
}

type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

func (f *fakeSlack) routes(handle func(string, http.HandlerFunc)) {
	handle("/auth.test", f.method("auth.test", func(c apiCall) any {
		return map[string]any{"ok": true, "team": "Acme", "user": "hitl", "team_id": "T0001", "user_id": "UBOT"}
	}))
	handle("/chat.postMessage", f.method("chat.postMessage", func(c apiCall) any {
		f.mu.Lock()
		fail := f.failPost
		f.nextTS++
		ts := fmt.Sprintf("1700000000.%06d", f.nextTS)
		f.mu.Unlock()
		if fail != "" {
			return map[string]any{"ok": false, "error": fail}
		}
		return map[string]any{"ok": true, "channel": c.form.Get("channel"), "ts": ts}
	}))
	handle("/chat.update", f.method("chat.update", func(c apiCall) any {
		return map[string]any{"ok": true, "channel": c.form.Get("channel"), "ts": c.form.Get("ts")}
	}))
	handle("/chat.postEphemeral", f.method("chat.postEphemeral", func(c apiCall) any {
		return map[string]any{"ok": true, "message_ts": "1700000001.000001"}
	}))
	handle("/users.info", f.method("users.info", func(c apiCall) any {
		id := c.form.Get("user")
		f.mu.Lock()
		email := f.users[id]
		f.mu.Unlock()
		return map[string]any{"ok": true, "user": map[string]any{"id": id, "name": strings.ToLower(id), "profile": map[string]any{"email": email}}}
	}))
	handle("/views.open", f.method("views.open", func(c apiCall) any {
		return map[string]any{"ok": true, "view": map[string]any{"id": "V0001"}}
	}))
	handle("/apps.connections.open", f.method("apps.connections.open", func(c apiCall) any {
		f.wsMu.Lock()
		u := f.wsURL + "?token=" + url.QueryEscape(c.token)
		f.wsMu.Unlock()
		return map[string]any{"ok": true, "url": u}
	}))
	handle("/socket", f.socket)
}

// method wraps a fake Web API method: it records the call, refuses
// unknown tokens like Slack (invalid_auth), and answers with JSON.
func (f *fakeSlack) method(name string, answer func(apiCall) any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := apiCall{method: name}
		body, _ := io.ReadAll(r.Body)
		if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			_ = json.Unmarshal(body, &c.body)
		} else {
			c.form, _ = url.ParseQuery(string(body))
		}
		if c.form == nil {
			c.form = url.Values{}
		}
		c.token = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if c.token == "" {
			c.token = c.form.Get("token")
		}
		f.mu.Lock()
		ok := f.tokens[c.token]
		f.calls = append(f.calls, c)
		close(f.changed)
		f.changed = make(chan struct{})
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if !ok {
			_ = json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": "invalid_auth"})
			return
		}
		_ = json.NewEncoder(w).Encode(answer(c))
	}
}

// called returns the calls of method so far.
func (f *fakeSlack) called(method string) []apiCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []apiCall
	for _, c := range f.calls {
		if c.method == method {
			out = append(out, c)
		}
	}
	return out
}

// waitFor waits until the fake has received n calls of method for which
// match (if not nil) holds, and returns them.
func (f *fakeSlack) waitFor(method string, n int, match func(apiCall) bool) []apiCall {
	f.t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		var got []apiCall
		for _, c := range f.calls {
			if c.method == method && (match == nil || match(c)) {
				got = append(got, c)
			}
		}
		ch := f.changed
		f.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-ch:
		case <-deadline.C:
			f.t.Fatalf("waited 10s for %d %s calls; got %d", n, method, len(got))
		}
	}
}

// socket is the fake Socket Mode endpoint: it greets with hello, records
// acknowledgements, and counts connections.
func (f *fakeSlack) socket(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	token := r.URL.Query().Get("token")
	f.wsMu.Lock()
	f.conns[c] = token
	f.opened++
	f.wsSignal()
	f.wsMu.Unlock()
	defer func() {
		f.wsMu.Lock()
		delete(f.conns, c)
		f.wsSignal()
		f.wsMu.Unlock()
		c.CloseNow()
	}()
	ctx := r.Context()
	if err := wsjson.Write(ctx, c, map[string]any{"type": "hello", "num_connections": 1}); err != nil {
		return
	}
	for {
		var ack json.RawMessage
		if err := wsjson.Read(ctx, c, &ack); err != nil {
			return
		}
		f.wsMu.Lock()
		f.acks = append(f.acks, ack)
		f.wsSignal()
		f.wsMu.Unlock()
	}
}

// wsSignal wakes waitSocket; callers hold wsMu.
func (f *fakeSlack) wsSignal() {
	close(f.wsChange)
	f.wsChange = make(chan struct{})
}

// waitSocket waits until cond holds of the open connections (by app
// token), the number ever opened and the acknowledgements received.
func (f *fakeSlack) waitSocket(what string, cond func(open []string, opened int, acks []json.RawMessage) bool) {
	f.t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		f.wsMu.Lock()
		var open []string
		for _, tok := range f.conns {
			open = append(open, tok)
		}
		ok := cond(open, f.opened, f.acks)
		ch := f.wsChange
		opened := f.opened
		f.wsMu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			f.t.Fatalf("waited 10s for %s; open connections %v, opened %d", what, open, opened)
		}
	}
}

// send writes an envelope to every open Socket Mode connection.
func (f *fakeSlack) send(envelope any) {
	f.t.Helper()
	f.wsMu.Lock()
	defer f.wsMu.Unlock()
	if len(f.conns) == 0 {
		f.t.Fatal("no Socket Mode connection to send to")
	}
	for c := range f.conns {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := wsjson.Write(ctx, c, envelope)
		cancel()
		if err != nil {
			f.t.Fatalf("write to the Socket Mode connection: %v", err)
		}
	}
}

func (f *fakeSlack) closeSockets() {
	f.wsMu.Lock()
	defer f.wsMu.Unlock()
	for c := range f.conns {
		c.CloseNow()
	}
}
