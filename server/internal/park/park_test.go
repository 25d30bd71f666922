package park_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/internal/hitltest"
	"github.com/hitl-sh/hitl/server/internal/park"
)

// ioTimeout bounds each read and write of a test's connection.
const ioTimeout = 15 * time.Second

// parkServer serves GET /wait/{id}?d=DURATION, parking the wait on a
// Listener over a real TCP socket, and GET /ping, over a real broker.
type parkServer struct {
	b    *broker.Broker
	l    *park.Listener
	addr string
}

func startParkServer(t *testing.T, sweep time.Duration) *parkServer {
	t.Helper()
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ps := &parkServer{b: hitltest.StartBroker(t), l: park.NewListener(tcp, nil, sweep), addr: tcp.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ping", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "pong") })
	mux.HandleFunc("GET /wait/{id}", func(w http.ResponseWriter, r *http.Request) {
		d, err := time.ParseDuration(r.URL.Query().Get("d"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		p := ps.l.NewWait(!r.Close)
		in, stop, err := ps.b.WaitFunc(r.Context(), r.PathValue("id"), p.Wake)
		if stop == nil {
			p.Forget()
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			_ = json.NewEncoder(w).Encode(in)
			return
		}
		if err := p.Park(w, in, stop, d, nil); err != nil {
			t.Errorf("park: %v", err)
		}
	})
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: ioTimeout}
	go func() { _ = hs.Serve(ps.l) }()
	t.Cleanup(func() { _ = hs.Close() })
	return ps
}

// ask creates a pending question.
func (ps *parkServer) ask(t *testing.T) *hitl.Interaction {
	t.Helper()
	in, _, err := ps.b.Create(t.Context(), hitl.CreateRequest{Question: "Ship it?", Type: hitl.TypeFreeText, Timeout: 600})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return in
}

// dial opens a raw connection to ps, for requests net/http's client does
// not send (pipelining, Connection: close) and to see the connection's fate.
func (ps *parkServer) dial(t *testing.T) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", ps.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(ioTimeout))
	return c, bufio.NewReader(c)
}

// send writes GET requests for paths, back to back, with extra headers.
func send(t *testing.T, c net.Conn, header string, paths ...string) {
	t.Helper()
	var b strings.Builder
	for _, p := range paths {
		b.WriteString("GET " + p + " HTTP/1.1\r\nHost: test\r\n" + header + "\r\n")
	}
	if _, err := io.WriteString(c, b.String()); err != nil {
		t.Fatal(err)
	}
}

// read reads one response and its body.
func read(t *testing.T, br *bufio.Reader) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp, string(body)
}

// status decodes the interaction's status from a response body.
func status(t *testing.T, body string) hitl.Status {
	t.Helper()
	var in hitl.Interaction
	if err := json.Unmarshal([]byte(body), &in); err != nil {
		t.Fatalf("response body %q: %v", body, err)
	}
	return in.Status
}

// TestAnsweredWaitKeepsTheConnection: the answer is written on the parked
// connection, which net/http then serves again.
func TestAnsweredWaitKeepsTheConnection(t *testing.T) {
	t.Parallel()
	ps := startParkServer(t, 0)
	in := ps.ask(t)
	c, br := ps.dial(t)
	send(t, c, "", "/wait/"+in.ID+"?d=5m")
	hitltest.WaitFor(t, "the wait to be parked", func() bool { return ps.l.Parked() == 1 })
	if _, err := ps.b.Respond(t.Context(), in.ID, json.RawMessage(`"yes"`)); err != nil {
		t.Fatalf("respond: %v", err)
	}
	resp, body := read(t, br)
	if resp.StatusCode != http.StatusOK || resp.Close || status(t, body) != hitl.StatusAnswered {
		t.Fatalf("answered wait: status %d, close %v: %s", resp.StatusCode, resp.Close, body)
	}
	if got := resp.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type %q, want application/json", got)
	}
	send(t, c, "", "/ping")
	if resp, body := read(t, br); resp.StatusCode != http.StatusOK || body != "pong" {
		t.Errorf("next request on the connection: status %d: %q", resp.StatusCode, body)
	}
	if err := ps.l.WaitParked(hitltest.Context(t)); err != nil {
		t.Errorf("the answered wait is still counted as parked: %v", err)
	}
}

// TestWaitEndsWithTheInteractionAsItStood: at the wait's end the pending
// interaction is the response.
func TestWaitEndsWithTheInteractionAsItStood(t *testing.T) {
	t.Parallel()
	ps := startParkServer(t, 0)
	in := ps.ask(t)
	c, br := ps.dial(t)
	send(t, c, "", "/wait/"+in.ID+"?d=10ms")
	resp, body := read(t, br)
	if resp.StatusCode != http.StatusOK || status(t, body) != hitl.StatusPending {
		t.Fatalf("expired wait: status %d: %s", resp.StatusCode, body)
	}
	if ps.b.Waiting() != 0 {
		t.Errorf("the broker still has %d waiters after the wait ended", ps.b.Waiting())
	}
}

// TestConnectionCloseIsHonoured: a client that asked to close gets
// Connection: close, and the connection ends after the response.
func TestConnectionCloseIsHonoured(t *testing.T) {
	t.Parallel()
	ps := startParkServer(t, 0)
	in := ps.ask(t)
	c, br := ps.dial(t)
	send(t, c, "Connection: close\r\n", "/wait/"+in.ID+"?d=10ms")
	resp, body := read(t, br)
	if resp.StatusCode != http.StatusOK || !resp.Close || status(t, body) != hitl.StatusPending {
		t.Fatalf("status %d, close %v: %s", resp.StatusCode, resp.Close, body)
	}
	if n, err := br.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("after the response: read %d, %v; want EOF (connection closed)", n, err)
	}
}

// TestPipelinedRequestIsServedAfterTheWait: a request sent behind the
// parked one on the same connection is kept and served next.
func TestPipelinedRequestIsServedAfterTheWait(t *testing.T) {
	t.Parallel()
	ps := startParkServer(t, 0)
	in := ps.ask(t)
	c, br := ps.dial(t)
	send(t, c, "", "/wait/"+in.ID+"?d=5m", "/ping")
	hitltest.WaitFor(t, "the wait to be parked", func() bool { return ps.l.Parked() == 1 })
	if _, err := ps.b.Cancel(t.Context(), in.ID, "changed my mind"); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if resp, body := read(t, br); resp.StatusCode != http.StatusOK || status(t, body) != hitl.StatusCancelled {
		t.Fatalf("parked wait: status %d: %s", resp.StatusCode, body)
	}
	if resp, body := read(t, br); resp.StatusCode != http.StatusOK || body != "pong" {
		t.Fatalf("pipelined request: status %d: %q", resp.StatusCode, body)
	}
}

// TestHungUpWaitIsSwept: a client that closes its connection while parked
// is noticed by the sweep, long before the wait's end, and its broker
// registration ends.
func TestHungUpWaitIsSwept(t *testing.T) {
	t.Parallel()
	ps := startParkServer(t, 20*time.Millisecond)
	in := ps.ask(t)
	c, _ := ps.dial(t)
	send(t, c, "", "/wait/"+in.ID+"?d=5m")
	hitltest.WaitFor(t, "the wait to be parked", func() bool { return ps.l.Parked() == 1 })
	c.Close()
	if err := ps.l.WaitParked(hitltest.Context(t)); err != nil {
		t.Fatalf("the hung-up wait was not swept: %v", err)
	}
	if got := ps.b.Waiting(); got != 0 {
		t.Errorf("broker waiters %d after the sweep, want 0", got)
	}
}

// TestBrokerCloseAnswersParkedWaits: when the broker closes, every parked
// wait gets the interaction as it stood and its connection is closed;
// WaitParked returns once they are written.
func TestBrokerCloseAnswersParkedWaits(t *testing.T) {
	t.Parallel()
	ps := startParkServer(t, 0)
	in := ps.ask(t)
	const n = 5
	readers := make([]*bufio.Reader, n)
	for i := range readers {
		c, br := ps.dial(t)
		send(t, c, "", "/wait/"+in.ID+"?d=5m")
		readers[i] = br
	}
	hitltest.WaitFor(t, "every wait to be parked", func() bool { return ps.l.Parked() == n })
	if err := ps.b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ps.l.WaitParked(hitltest.Context(t)); err != nil {
		t.Fatalf("wait for the parked long-polls: %v", err)
	}
	for i, br := range readers {
		resp, body := read(t, br)
		if resp.StatusCode != http.StatusOK || !resp.Close || status(t, body) != hitl.StatusPending {
			t.Errorf("wait %d at shutdown: status %d, close %v: %s", i, resp.StatusCode, resp.Close, body)
		}
	}
}
