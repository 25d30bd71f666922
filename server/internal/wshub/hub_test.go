package wshub_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/server/internal/wshub"
)

// readyMessage is what the test server replays before it goes live.
const readyMessage = `{"type":"ready"}`

// testEncoder renders an event as {"type", "id", "seq"}, and a question
// for replays as {"id"}.
type testEncoder struct{}

func (testEncoder) Event(ev *hitl.Event) ([][]byte, []byte, error) {
	data, err := json.Marshal(map[string]any{"type": ev.Type, "id": ev.InteractionID, "seq": ev.Seq})
	return [][]byte{data}, nil, err
}

func (testEncoder) Question(in *hitl.Interaction) ([]byte, error) {
	return json.Marshal(map[string]any{"id": in.ID})
}

// hubServer is a hub over a real broker, served on /ws: each connection
// replays readyMessage and goes live. Questions starting "secret" are
// shown to no one.
type hubServer struct {
	b   *broker.Broker
	hub *wshub.Hub
	url string
}

func startHub(t *testing.T, opts *wshub.Options) *hubServer {
	t.Helper()
	b := hitltest.StartBroker(t)
	hub := wshub.New(b, testEncoder{}, opts)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := hub.Accept(w, r, wshub.Peer{
			Ctx:   r.Context(),
			Cred:  "test",
			Shows: func(ev *hitl.Event) bool { return !strings.HasPrefix(ev.Interaction.Question, "secret") },
		})
		if c == nil {
			return
		}
		// ?skip=N: the client has every event up to N (a resume).
		skip, _ := strconv.ParseInt(r.URL.Query().Get("skip"), 10, 64)
		if c.Replay().Finish([]byte(readyMessage)) {
			c.GoLive(nil, 0, skip)
		}
	}))
	t.Cleanup(hs.Close)
	return &hubServer{b: b, hub: hub, url: "ws" + strings.TrimPrefix(hs.URL, "http")}
}

// dial opens a WebSocket with gobwas/ws's client, which sends any frame a
// test asks for, and reads the replay.
func (hs *hubServer) dial(t *testing.T) net.Conn {
	t.Helper()
	return hs.dialQuery(t, "")
}

// dialQuery is dial with a query string.
func (hs *hubServer) dialQuery(t *testing.T, query string) net.Conn {
	t.Helper()
	c := hs.dialRaw(t, query)
	if op, p, err := readFrame(c); err != nil || op != ws.OpText || string(p) != readyMessage {
		t.Fatalf("replay: opcode %v %q, %v; want %s", op, p, err, readyMessage)
	}
	return c
}

// dialRaw opens a WebSocket and reads nothing.
func (hs *hubServer) dialRaw(t *testing.T, query string) net.Conn {
	t.Helper()
	nc, br, _, err := ws.Dial(hitltest.Context(t), hs.url+query)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { nc.Close() })
	var c net.Conn = nc
	if br != nil {
		// The replay came with the handshake's answer: read it first.
		c = bufferedConn{Conn: nc, r: br}
	}
	_ = c.SetDeadline(time.Now().Add(hitltest.Bound))
	return c
}

// bufferedConn reads what the dial buffered, then the connection.
type bufferedConn struct {
	net.Conn
	r io.Reader
}

func (c bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// ask creates a pending question.
func (hs *hubServer) ask(t *testing.T, question string) *hitl.Interaction {
	t.Helper()
	in, _, err := hs.b.Create(t.Context(), hitl.CreateRequest{Question: question, Timeout: 600})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return in
}

// readFrame reads one server frame (of at most 1 MiB).
func readFrame(c net.Conn) (ws.OpCode, []byte, error) {
	h, err := ws.ReadHeader(c)
	if err != nil {
		return 0, nil, err
	}
	if h.Length > 1<<20 {
		return 0, nil, fmt.Errorf("frame of %d bytes", h.Length)
	}
	p := make([]byte, h.Length)
	if _, err := io.ReadFull(c, p); err != nil {
		return 0, nil, err
	}
	return h.OpCode, p, nil
}

// readMessage reads the next text message, past pings.
func readMessage(t *testing.T, c net.Conn) map[string]any {
	t.Helper()
	for {
		op, p, err := readFrame(c)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if op == ws.OpPing {
			continue
		}
		var m map[string]any
		if op != ws.OpText || json.Unmarshal(p, &m) != nil {
			t.Fatalf("got opcode %v %q, want a JSON text message", op, p)
		}
		return m
	}
}

// readClose reads frames until the server's close frame and returns its
// status code.
func readClose(t *testing.T, c net.Conn) ws.StatusCode {
	t.Helper()
	for {
		op, p, err := readFrame(c)
		if err != nil {
			t.Fatalf("read until the close frame: %v", err)
		}
		if op == ws.OpClose {
			code, _ := ws.ParseCloseFrameData(p)
			return code
		}
	}
}

// TestEventsReachEveryConnectionInOrder: each event is written once to
// every connection it is shown to, in sequence order; one shown to no
// one is skipped.
func TestEventsReachEveryConnectionInOrder(t *testing.T) {
	t.Parallel()
	hs := startHub(t, nil)
	conns := []net.Conn{hs.dial(t), hs.dial(t), hs.dial(t)}
	first := hs.ask(t, "First?")
	hs.ask(t, "secret: nobody sees this")
	second := hs.ask(t, "Second?")
	for i, c := range conns {
		var last float64
		for _, want := range []string{first.ID, second.ID} {
			m := readMessage(t, c)
			if m["type"] != string(hitl.EventCreated) || m["id"] != want {
				t.Fatalf("connection %d: got %v, want created %s", i, m, want)
			}
			if seq := m["seq"].(float64); seq <= last {
				t.Errorf("connection %d: seq %v after %v", i, seq, last)
			} else {
				last = seq
			}
		}
	}
}

// TestLiveEventsTheClientHasAreSkipped: a connection that resumed ahead
// of this server's feed (another replica's events not here yet) is not
// sent those events again when the feed catches up.
func TestLiveEventsTheClientHasAreSkipped(t *testing.T) {
	t.Parallel()
	hs := startHub(t, nil)
	last, err := hs.b.LastEventSeq(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	c := hs.dialQuery(t, fmt.Sprintf("?skip=%d", last+1))
	hs.ask(t, "Seen already?")
	next := hs.ask(t, "New?")
	if m := readMessage(t, c); m["id"] != next.ID {
		t.Errorf("got %v, want the created event of %s only", m, next.ID)
	}
}

// TestPingsAndDeadPeers runs the sweep with short intervals: a client
// that answers pings stays, one that reads them but never answers is
// dropped once a ping goes unanswered for PongWait.
func TestPingsAndDeadPeers(t *testing.T) {
	t.Parallel()
	hs := startHub(t, &wshub.Options{Ping: 50 * time.Millisecond, PongWait: time.Second})
	alive, dead := hs.dial(t), hs.dial(t)

	// dead reads its pings and never answers, until the hub ends it.
	deadEnded := make(chan error, 1)
	go func() {
		for {
			op, _, err := readFrame(dead)
			if err != nil {
				deadEnded <- nil
				return
			}
			if op != ws.OpPing {
				deadEnded <- fmt.Errorf("dead peer got opcode %v, want only pings and then the end", op)
				return
			}
		}
	}()
	// alive answers every ping meanwhile.
	pings := 0
	for {
		op, payload, err := readFrame(alive)
		if err != nil {
			t.Fatalf("alive: read after %d pings: %v", pings, err)
		}
		if op == ws.OpPing {
			pings++
			if err := ws.WriteFrame(alive, ws.MaskFrameInPlace(ws.NewPongFrame(payload))); err != nil {
				t.Fatalf("pong: %v", err)
			}
		}
		select {
		case err := <-deadEnded:
			if err != nil {
				t.Fatal(err)
			}
			// Only the peer that answered is left.
			if pings < 2 {
				t.Errorf("alive was pinged %d times before dead was dropped, want several", pings)
			}
			if got := hs.hub.Open(); got != 1 {
				t.Errorf("open connections %d, want 1 (the one answering pings)", got)
			}
			return
		default:
		}
	}
}

// TestProtocolErrors: frames a client must not send close the connection
// with the code RFC 6455 gives, and a client's close is answered.
func TestProtocolErrors(t *testing.T) {
	t.Parallel()
	hs := startHub(t, nil)
	masked := func(f ws.Frame) ws.Frame { return ws.MaskFrameInPlace(f) }
	for _, tc := range []struct {
		name   string
		frames []ws.Frame
		want   ws.StatusCode
	}{
		{"unmasked frame", []ws.Frame{ws.NewTextFrame([]byte("hi"))}, ws.StatusProtocolError},
		{"continuation first", []ws.Frame{masked(ws.NewFrame(ws.OpContinuation, true, []byte("x")))}, ws.StatusProtocolError},
		{"message over the limit", []ws.Frame{masked(ws.NewTextFrame([]byte(strings.Repeat("x", 16<<10))))}, ws.StatusMessageTooBig},
		{"fragments over the limit", []ws.Frame{
			masked(ws.NewFrame(ws.OpText, false, []byte(strings.Repeat("a", 3<<10)))),
			masked(ws.NewFrame(ws.OpContinuation, true, []byte(strings.Repeat("b", 3<<10)))),
		}, ws.StatusMessageTooBig},
		{"client close", []ws.Frame{masked(ws.NewCloseFrame(ws.NewCloseFrameBody(ws.StatusNormalClosure, "bye")))}, ws.StatusNormalClosure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := hs.dial(t)
			for _, f := range tc.frames {
				if err := ws.WriteFrame(c, f); err != nil {
					t.Fatalf("write: %v", err)
				}
			}
			if got := readClose(t, c); got != tc.want {
				t.Errorf("close status %d, want %d", got, tc.want)
			}
			// Having answered the client's close, or once the client
			// answers its own, the hub ends the connection (EOF, or a
			// reset when it refused to read further).
			if tc.want != ws.StatusNormalClosure {
				_ = ws.WriteFrame(c, masked(ws.NewCloseFrame(nil)))
			}
			if _, err := io.Copy(io.Discard, c); errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("after the close: the connection is still open")
			}
		})
	}
	hitltest.WaitFor(t, "every connection to leave the hub", func() bool { return hs.hub.Open() == 0 })
}

// TestClientMessagesAreIgnored: a message within the limit and a ping are
// read past (the ping answered), and events keep coming.
func TestClientMessagesAreIgnored(t *testing.T) {
	t.Parallel()
	hs := startHub(t, nil)
	c := hs.dial(t)
	if err := ws.WriteFrame(c, ws.MaskFrameInPlace(ws.NewTextFrame([]byte(`{"type":"hello"}`)))); err != nil {
		t.Fatal(err)
	}
	if err := ws.WriteFrame(c, ws.MaskFrameInPlace(ws.NewPingFrame([]byte("are you there")))); err != nil {
		t.Fatal(err)
	}
	if op, p, err := readFrame(c); err != nil || op != ws.OpPong || string(p) != "are you there" {
		t.Fatalf("after a ping: opcode %v %q, %v; want the pong", op, p, err)
	}
	in := hs.ask(t, "Still there?")
	if m := readMessage(t, c); m["id"] != in.ID {
		t.Fatalf("got %v, want the event of %s", m, in.ID)
	}
}

// TestRevokedCredentialsClose: once StillValid says no, the connection is
// closed with 1008 and the reason.
func TestRevokedCredentialsClose(t *testing.T) {
	t.Parallel()
	var revoked atomic.Bool
	hs := startHub(t, &wshub.Options{
		Recheck:    20 * time.Millisecond,
		StillValid: func(context.Context) bool { return !revoked.Load() },
	})
	c := hs.dial(t)
	in := hs.ask(t, "Before revocation?")
	if m := readMessage(t, c); m["id"] != in.ID {
		t.Fatalf("got %v, want the event of %s", m, in.ID)
	}
	revoked.Store(true)
	if got, want := readClose(t, c), ws.StatusPolicyViolation; got != want {
		t.Errorf("close status %d, want %d", got, want)
	}
}

// TestSourceCloseClosesConnections: when the source closes, each
// connection is closed with 1001; later ones are refused with 1001.
func TestSourceCloseClosesConnections(t *testing.T) {
	t.Parallel()
	hs := startHub(t, nil)
	c := hs.dial(t)
	in := hs.ask(t, "Before shutdown?")
	if m := readMessage(t, c); m["id"] != in.ID {
		t.Fatalf("got %v, want the event of %s", m, in.ID)
	}
	if err := hs.b.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := readClose(t, c), ws.StatusGoingAway; got != want {
		t.Errorf("close status %d, want %d", got, want)
	}
	hitltest.WaitFor(t, "the hub to empty", func() bool { return hs.hub.Open() == 0 })

	late := hs.dialRaw(t, "")
	if got, want := readClose(t, late), ws.StatusGoingAway; got != want {
		t.Errorf("connection after shutdown: close status %d, want %d", got, want)
	}
}
