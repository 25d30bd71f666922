package server_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/server"
)

// actor is someone calling the server: a bearer token, a session cookie,
// or nothing (anonymous).
type actor struct {
	name   string
	token  string
	cookie *http.Cookie
}

// apply adds the actor's credentials to req.
func (a actor) apply(req *http.Request) {
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	if a.cookie != nil {
		req.AddCookie(a.cookie)
	}
}

// header returns the actor's credentials as request headers.
func (a actor) header() http.Header {
	req, _ := http.NewRequest("GET", "/", nil)
	a.apply(req)
	return req.Header
}

// authServer is a real hitl server with authentication on: users alice
// (responder), bob (responder in group ops) and carol (admin), and tokens
// for build-bot and other-bot (agents) and root (admin).
type authServer struct {
	URL    string
	HS     *httptest.Server
	Broker *broker.Broker
	Store  hitltest.Store
	IDs    hitl.Identities
	Path   string // the SQLite file; "" on PostgreSQL
	Logs   *syncBuffer

	anon, agent, otherAgent, alice, bob, admin actor
}

// syncBuffer is a bytes.Buffer safe for concurrent use, for logs.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// rawDB opens a plain read-only connection to the SQLite file at path, to
// look at what is stored.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// newAuthServer starts a server over a new SQLite file with the test
// identities and logs the two people in; its logs are kept in Logs.
func newAuthServer(t *testing.T, opts server.AuthOptions) *authServer {
	t.Helper()
	return startAuthServer(t, hitltest.SQLiteDB(t), opts)
}

// startAuthServer is newAuthServer over db.
func startAuthServer(t *testing.T, db hitltest.DB, opts server.AuthOptions) *authServer {
	t.Helper()
	return startAuthServerWith(t, &hitltest.Options{DB: db}, opts)
}

// startAuthServerWith is startAuthServer with more of the harness's
// options (People and Server are set here).
func startAuthServerWith(t *testing.T, hopts *hitltest.Options, opts server.AuthOptions) *authServer {
	t.Helper()
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	o := *hopts
	var origins []string
	if o.Server != nil {
		origins = o.Server.EmbedOrigins
	}
	o.People, o.Server = true, &server.Options{Logger: log, Auth: opts, EmbedOrigins: origins}
	s := hitltest.Start(t, &o)
	ts := &authServer{URL: s.URL, HS: s.Server, Broker: s.Broker, Store: s.Store, IDs: s.Store, Path: s.Path, Logs: logs}
	ts.anon = actor{name: "anonymous"}
	ts.agent = actor{name: "build-bot", token: s.Token(t, "build-bot", hitl.RoleAgent)}
	ts.otherAgent = actor{name: "other-bot", token: s.Token(t, "other-bot", hitl.RoleAgent)}
	ts.admin = actor{name: "root", token: s.Token(t, "root", hitl.RoleAdmin)}
	ts.alice = actor{name: "alice", cookie: ts.login(t, "alice", hitltest.AlicePassword)}
	ts.bob = actor{name: "bob", cookie: ts.login(t, "bob", hitltest.BobPassword)}
	return ts
}

// login logs in over the API and returns the session cookie.
func (ts *authServer) login(t *testing.T, username, password string) *http.Cookie {
	t.Helper()
	return hitltest.Login(t, ts.URL, username, password)
}

// call sends a request as a, with body as JSON unless it is a string,
// and returns the response (body read and closed) and the body.
func (ts *authServer) call(t *testing.T, a actor, method, path string, body any, headers ...string) (*http.Response, []byte) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, ts.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	a.apply(req)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, data
}

// noRedirects is an HTTP client that returns redirects as they are.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// ask creates an interaction as build-bot, through the engine, with
// targets (nil: untargeted).
func (ts *authServer) ask(t *testing.T, targets *hitl.Targets) *hitl.Interaction {
	t.Helper()
	ctx := hitl.WithCaller(context.Background(), hitl.Caller{Name: "build-bot", Role: hitl.RoleAgent, Channel: hitl.ChannelAPI})
	in, _, err := ts.Broker.Create(ctx, hitl.CreateRequest{Question: "Deploy build 1432?", Timeout: 600, Targets: targets})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return in
}

// status returns an interaction's status, read as an admin.
func (ts *authServer) status(t *testing.T, id string) hitl.Status {
	t.Helper()
	in, err := ts.Broker.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("get %s: %v", id, err)
	}
	return in.Status
}

// dialWS opens /ws as a and returns the connection, or the HTTP status
// of a refused handshake.
func (ts *authServer) dialWS(t *testing.T, a actor) (*websocket.Conn, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), streamTimeout)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http")+"/ws", &websocket.DialOptions{HTTPHeader: a.header()})
	if err != nil {
		if resp == nil {
			t.Fatalf("dial /ws as %s: %v", a.name, err)
		}
		return nil, resp.StatusCode
	}
	c.SetReadLimit(1 << 20)
	t.Cleanup(func() { _ = c.CloseNow() })
	return c, resp.StatusCode
}

// openSSE opens /api/v1/events as a (resuming after lastEventID unless it
// is "") and returns the stream, or the status of a refusal.
func (ts *authServer) openSSE(t *testing.T, a actor, lastEventID string) (*sseStream, int) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", ts.URL+"/api/v1/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	a.apply(req)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /api/v1/events as %s: %v", a.name, err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		return nil, resp.StatusCode
	}
	ch := make(chan sseEvent)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		parseSSE(ctx, bufio.NewScanner(resp.Body), ch)
	}()
	s := &sseStream{events: ch, cancel: cancel}
	if ev, err := s.next(t); err != nil || ev.Retry == "" {
		t.Fatalf("first SSE block %+v, %v; want the retry hint", ev, err)
	}
	return s, resp.StatusCode
}

// mustUnmarshal decodes JSON data into v.
func mustUnmarshal(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
}
