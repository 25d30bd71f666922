package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/internal/turns"
	"github.com/hitl-sh/hitl/server"
)

// streamTimeout bounds how long a test waits for one stream message.
const streamTimeout = 15 * time.Second

// streamServerOptions configure newStreamServer.
type streamServerOptions struct {
	// WebSocketQueue is the server's; 0 means its default.
	WebSocketQueue int
	// SendBuffer, when set, is the kernel send buffer (SO_SNDBUF) of every
	// accepted connection, so a client that stops reading blocks the
	// server's writes after a few messages.
	SendBuffer int
}

// newStreamServer is newTestServer with server and socket options.
func newStreamServer(t *testing.T, opts streamServerOptions) *testServer {
	t.Helper()
	o := &hitltest.Options{Server: &server.Options{WebSocketQueue: opts.WebSocketQueue}}
	if opts.SendBuffer > 0 {
		o.Listen = func(l net.Listener) net.Listener { return sendBufferListener{Listener: l, size: opts.SendBuffer} }
	}
	s := hitltest.Start(t, o)
	return &testServer{Server: s.Server, Broker: s.Broker, Store: s.Store, API: s.API, Path: s.Path, stop: s.Stop}
}

// sendBufferListener sets the send buffer of each accepted TCP connection.
type sendBufferListener struct {
	net.Listener
	size int
}

func (l sendBufferListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(l.size)
	}
	return c, err
}

// testContext returns a context that ends with the test or after d.
func testContext(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// wsURL is the server's WebSocket endpoint.
func (ts *testServer) wsURL() string {
	return "ws" + strings.TrimPrefix(ts.URL, "http") + "/ws"
}

// dialWS opens a WebSocket to ts with an optional Origin header.
func dialWS(t *testing.T, ts *testServer, opts *websocket.DialOptions) *websocket.Conn {
	t.Helper()
	ctx := testContext(t, streamTimeout)
	c, resp, err := websocket.Dial(ctx, ts.wsURL(), opts)
	if err != nil {
		t.Fatalf("dial %s: %v", ts.wsURL(), err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("dial: status %d, want 101", resp.StatusCode)
	}
	c.SetReadLimit(1 << 20)
	t.Cleanup(func() { _ = c.CloseNow() })
	return c
}

// readWS reads the next message a test acts on: hitl:replay_done, and
// the hitl:cancel (reason answered) that follows every hitl:resolved, are
// read past; readWSRaw reads them too.
func readWS(t *testing.T, c *websocket.Conn) map[string]any {
	t.Helper()
	for {
		m := readWSRaw(t, c)
		if !marker(m) {
			return m
		}
	}
}

// readWSType reads one message and checks its type and interaction.
func readWSType(t *testing.T, c *websocket.Conn, typ, id string) map[string]any {
	t.Helper()
	m := readWS(t, c)
	if m["type"] != typ || m["interaction_id"] != id {
		t.Fatalf("got %v %v, want %s %s: %v", m["type"], m["interaction_id"], typ, id, m)
	}
	return m
}

// create asks a question over HTTP and returns the new interaction.
func (ts *testServer) create(t *testing.T, req map[string]any) *hitl.Interaction {
	t.Helper()
	var in hitl.Interaction
	ts.mustDo(t, "POST", "/api/v1/interactions", req, http.StatusCreated, &in)
	return &in
}

// contractDeadline matches the AI-Parrot HITL contract's deadline: ISO-8601 in UTC with a Z.
var contractDeadline = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$`)

// checkContractTime checks that v is an ISO-8601 UTC time equal to want.
func checkContractTime(t *testing.T, field string, v any, want time.Time) {
	t.Helper()
	s, ok := v.(string)
	if !ok || !contractDeadline.MatchString(s) {
		t.Errorf("%s = %#v, want ISO-8601 UTC ending in Z", field, v)
		return
	}
	got, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || !got.Equal(want) {
		t.Errorf("%s = %s, want %s", field, s, want.UTC().Format(time.RFC3339Nano))
	}
}

func TestWebSocketQuestionContract(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	c := dialWS(t, ts, nil)

	schema := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}}
	cases := []struct {
		name   string
		create map[string]any
		want   map[string]any // every field but deadline and created_at
	}{
		{
			name:   "free text, nothing optional",
			create: map[string]any{"question": "Anything to add?", "timeout": 600},
			want: map[string]any{
				"interaction_type": "free_text", "question": "Anything to add?", "context": nil,
				"options": []any{}, "form_schema": nil, "default_response": nil,
				"timeout": 600.0, "source_agent": "",
			},
		},
		{
			name: "single choice with context, descriptions and default",
			create: map[string]any{
				"interaction_type": "single_choice", "question": "Which environment?", "context": "Release <1.4> & more",
				"options":          []any{"Staging", map[string]any{"key": "prod", "label": "Production", "description": "careful"}},
				"default_response": "staging", "timeout": 120, "source_agent": "hitl_demo",
			},
			want: map[string]any{
				"interaction_type": "single_choice", "question": "Which environment?", "context": "Release <1.4> & more",
				"options": []any{
					map[string]any{"key": "staging", "label": "Staging", "description": nil},
					map[string]any{"key": "prod", "label": "Production", "description": "careful"},
				},
				"form_schema": nil, "default_response": "staging", "timeout": 120.0, "source_agent": "hitl_demo",
			},
		},
		{
			name:   "approval gets approve and reject",
			create: map[string]any{"interaction_type": "approval", "question": "Deploy?", "timeout": 7200, "source_agent": "deployer"},
			want: map[string]any{
				"interaction_type": "approval", "question": "Deploy?", "context": nil,
				"options": []any{
					map[string]any{"key": "approve", "label": "Approve", "description": nil},
					map[string]any{"key": "reject", "label": "Reject", "description": nil},
				},
				"form_schema": nil, "default_response": nil, "timeout": 7200.0, "source_agent": "deployer",
			},
		},
		{
			name:   "a session's question says which session",
			create: map[string]any{"question": "Continue?", "session_id": "chat-42", "timeout": 60},
			want: map[string]any{
				"interaction_type": "free_text", "question": "Continue?", "context": nil,
				"options": []any{}, "form_schema": nil, "default_response": nil,
				"timeout": 60.0, "source_agent": "", "session_id": "chat-42",
			},
		},
		{
			name:   "form with schema",
			create: map[string]any{"interaction_type": "form", "question": "How many?", "form_schema": schema, "default_response": map[string]any{"n": 2}, "timeout": 1.5},
			want: map[string]any{
				"interaction_type": "form", "question": "How many?", "context": nil, "options": []any{},
				"form_schema": schema, "default_response": map[string]any{"n": 2.0}, "timeout": 1.5, "source_agent": "",
			},
		},
	}
	if ids, done := readReplay(t, c); len(ids) != 0 || done["resumed"] != false || fmt.Sprint(done["pending"]) != "[]" {
		t.Fatalf("replay of an empty inbox: %v, %v", ids, done)
	}
	last := 0.0
	for _, tc := range cases {
		in := ts.create(t, tc.create)
		got := readWSType(t, c, "hitl:question", in.ID)
		checkContractTime(t, tc.name+": deadline", got["deadline"], in.Deadline)
		checkContractTime(t, tc.name+": created_at", got["created_at"], in.CreatedAt)
		if _, ok := got["timeout"].(float64); !ok {
			t.Errorf("%s: timeout = %#v, want a JSON number", tc.name, got["timeout"])
		}
		// seq is the created event's place in the log: it grows.
		if seq, ok := got["seq"].(float64); !ok || seq <= last {
			t.Errorf("%s: seq = %#v, want a number after %v", tc.name, got["seq"], last)
		} else {
			last = seq
		}
		want := map[string]any{"type": "hitl:question", "interaction_id": in.ID, "deadline": got["deadline"], "created_at": got["created_at"], "seq": got["seq"]}
		for k, v := range tc.want {
			want[k] = v
		}
		// The schema object round-trips through JSON like the message does.
		want = roundTrip(t, want)
		if !reflect.DeepEqual(got, want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			t.Errorf("%s:\n got %s\nwant %s", tc.name, g, w)
		}
	}
}

// roundTrip returns v as it decodes from JSON.
func roundTrip(t *testing.T, v map[string]any) map[string]any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestWebSocketReplaysPendingOnConnect(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	var ids []string
	for i := range 3 {
		ids = append(ids, ts.create(t, map[string]any{"question": fmt.Sprintf("Question %d?", i)}).ID)
	}
	// Not pending any more, so not replayed.
	done := ts.create(t, map[string]any{"question": "Old?"})
	ts.mustDo(t, "POST", "/api/v1/interactions/"+done.ID+"/cancel", nil, http.StatusOK, nil)

	first := dialWS(t, ts, nil)
	second := dialWS(t, ts, nil)
	last, err := ts.Store.LastEventSeq(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*websocket.Conn{first, second} {
		for i, id := range ids {
			m := readWSType(t, c, "hitl:question", id)
			if want := fmt.Sprintf("Question %d?", i); m["question"] != want {
				t.Errorf("replay %d: question %v, want %q", i, m["question"], want)
			}
		}
		// The replay ends with the pending ids and where it is complete.
		done := readWSRaw(t, c)
		want := map[string]any{"type": "hitl:replay_done", "seq": float64(last), "resumed": false, "pending": []any{ids[0], ids[1], ids[2]}}
		if !reflect.DeepEqual(done, want) {
			t.Errorf("end of the replay: got %v, want %v", done, want)
		}
	}
	live := ts.create(t, map[string]any{"question": "Live?"})
	for _, c := range []*websocket.Conn{first, second} {
		readWSType(t, c, "hitl:question", live.ID)
	}
	// The next message after the live question is about the answer, so the
	// replayed questions were not sent again.
	ts.mustDo(t, "POST", "/api/v1/interactions/"+ids[0]+"/respond", map[string]any{"value": "yes"}, http.StatusOK, nil)
	for _, c := range []*websocket.Conn{first, second} {
		readWSType(t, c, "hitl:resolved", ids[0])
	}
}

func TestWebSocketIgnoresClientMessages(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	c := dialWS(t, ts, nil)
	readReplay(t, c)
	ctx := testContext(t, streamTimeout)
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"hello"}`)); err != nil {
		t.Fatalf("write: %v", err)
	}
	// Pings are answered while the server streams (the pong is read by a
	// concurrent Read, as the library requires).
	type result struct {
		data []byte
		err  error
	}
	read := make(chan result, 1)
	go func() {
		_, data, err := c.Read(ctx)
		read <- result{data, err}
	}()
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}
	in := ts.create(t, map[string]any{"question": "Still there?"})
	r := <-read
	var m map[string]any
	if r.err != nil || json.Unmarshal(r.data, &m) != nil || m["type"] != "hitl:question" || m["interaction_id"] != in.ID {
		t.Fatalf("after a client message and a ping: got %s, %v; want hitl:question for %s", r.data, r.err, in.ID)
	}

	// A message over the read limit closes the connection with 1009.
	if err := c.Write(ctx, websocket.MessageText, []byte(strings.Repeat("x", 16<<10))); err != nil {
		t.Fatalf("write: %v", err)
	}
	_, _, err := c.Read(ctx)
	if got, want := websocket.CloseStatus(err), websocket.StatusMessageTooBig; got != want {
		t.Errorf("after an oversized message: close status %v (%v), want %v", got, err, want)
	}
}

func TestWebSocketOrigin(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	host := strings.TrimPrefix(ts.URL, "http://")
	for _, tc := range []struct {
		origin string
		want   int
	}{
		{"", http.StatusSwitchingProtocols},               // not a browser
		{"http://" + host, http.StatusSwitchingProtocols}, // the inbox itself
		{"https://evil.example", http.StatusForbidden},
	} {
		h := http.Header{}
		if tc.origin != "" {
			h.Set("Origin", tc.origin)
		}
		ctx := testContext(t, streamTimeout)
		c, resp, err := websocket.Dial(ctx, ts.wsURL(), &websocket.DialOptions{HTTPHeader: h})
		got := 0
		if resp != nil {
			got = resp.StatusCode
		}
		if got != tc.want {
			t.Errorf("Origin %q: status %d (%v), want %d", tc.origin, got, err, tc.want)
		}
		if c != nil {
			_ = c.Close(websocket.StatusNormalClosure, "")
		}
	}
}

func TestWebSocketSlowClientIsDropped(t *testing.T) {
	turns.Parallel(t)
	ts := newStreamServer(t, streamServerOptions{WebSocketQueue: 2, SendBuffer: 4 << 10})
	slow := dialWS(t, ts, nil)
	good := dialWS(t, ts, nil)
	// Both subscriptions are open once a first message went through.
	first := ts.create(t, map[string]any{"question": "First?"})
	readWSType(t, slow, "hitl:question", first.ID)
	readWSType(t, good, "hitl:question", first.ID)
	if got, want := ts.API.WebSockets(), 2; got != want {
		t.Fatalf("open WebSockets %d, want %d", got, want)
	}

	// slow stops reading. Questions of a few KB fill the socket buffers,
	// then the server's write to slow blocks, then slow's subscription
	// queue overflows and it is closed. good reads every message meanwhile.
	ids := []string{first.ID}
	pad := strings.Repeat("context ", 512)
	for ts.API.WebSockets() == 2 {
		if len(ids) > 2000 {
			t.Fatalf("slow client still subscribed after %d questions", len(ids))
		}
		in := ts.create(t, map[string]any{"question": fmt.Sprintf("Question %d?", len(ids)), "context": pad})
		readWSType(t, good, "hitl:question", in.ID)
		ids = append(ids, in.ID)
	}
	t.Logf("slow client dropped after %d questions", len(ids))

	// slow gets what was already on its way, then 1013 (try again later).
	var closeErr error
	for n := 0; closeErr == nil; n++ {
		if n > len(ids) {
			t.Fatalf("slow client read %d messages and no close", n)
		}
		_, _, closeErr = slow.Read(testContext(t, streamTimeout))
	}
	if got, want := websocket.CloseStatus(closeErr), websocket.StatusTryAgainLater; got != want {
		t.Fatalf("slow client closed with %v (%v), want %v", got, closeErr, want)
	}

	// The server keeps serving good.
	live := ts.create(t, map[string]any{"question": "Still serving?"})
	readWSType(t, good, "hitl:question", live.ID)

	// slow reconnects and gets every pending question back, in order.
	again := dialWS(t, ts, nil)
	for _, id := range append(ids, live.ID) {
		readWSType(t, again, "hitl:question", id)
	}
}

func TestStreamsEndOnShutdown(t *testing.T) {
	turns.Parallel(t)
	ts := newTestServer(t)
	c := dialWS(t, ts, nil)
	events := openSSE(t, ts, "", "")
	in := ts.create(t, map[string]any{"question": "Before shutdown?"})
	readWSType(t, c, "hitl:question", in.ID)
	events.nextType(t, "hitl:question")

	if err := ts.Broker.Close(); err != nil {
		t.Fatalf("close broker: %v", err)
	}
	_, _, err := c.Read(testContext(t, streamTimeout))
	if got, want := websocket.CloseStatus(err), websocket.StatusGoingAway; got != want {
		t.Errorf("WebSocket closed with %v (%v), want %v", got, err, want)
	}
	if ev, err := events.next(t); !errors.Is(err, errStreamEnded) {
		t.Errorf("SSE after shutdown: got %+v, %v; want the stream to end", ev, err)
	}
}
