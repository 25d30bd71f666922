package slackfake

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
)

// pingEvery is how often the Socket Mode server pings each connection, as
// Slack does; slack-go's client drops a connection that goes 30 seconds
// without one.
const pingEvery = 10 * time.Second

// sockets is the Socket Mode server's state.
type sockets struct {
	mu      sync.Mutex
	tickets map[string]string // unused ticket → app token
	issued  int
	conns   map[*websocket.Conn]string // open connections → app token
	opened  int                        // connections ever accepted
	acks    []json.RawMessage
	changed chan struct{} // closed and replaced on every change
}

func newSockets() sockets {
	return sockets{tickets: map[string]string{}, conns: map[*websocket.Conn]string{}, changed: make(chan struct{})}
}

// ticket issues a single-use ticket to connect as the app token.
func (k *sockets) ticket(appToken string) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.issued++
	t := strconv.Itoa(k.issued)
	k.tickets[t] = appToken
	return t
}

// signal wakes the waiters; callers hold mu.
func (k *sockets) signal() {
	close(k.changed)
	k.changed = make(chan struct{})
}

// socket serves a Socket Mode connection for a ticket from
// apps.connections.open: it greets with hello, pings, and records the
// acknowledgements it reads.
func (s *Server) socket(w http.ResponseWriter, r *http.Request) {
	k := &s.sock
	k.mu.Lock()
	token, ok := k.tickets[r.URL.Query().Get("ticket")]
	delete(k.tickets, r.URL.Query().Get("ticket"))
	k.mu.Unlock()
	if !ok {
		http.Error(w, "unknown ticket", http.StatusUnauthorized)
		return
	}
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	k.mu.Lock()
	k.conns[c] = token
	k.opened++
	n := len(k.conns)
	k.signal()
	k.mu.Unlock()
	defer func() {
		cancel()
		k.mu.Lock()
		delete(k.conns, c)
		k.signal()
		k.mu.Unlock()
		c.CloseNow()
	}()
	hello := map[string]any{"type": "hello", "num_connections": n,
		"debug_info": map[string]any{"host": "slackfake"}, "connection_info": map[string]any{"app_id": "A0TEST"}}
	if err := wsjson.Write(ctx, c, hello); err != nil {
		return
	}
	go ping(ctx, c)
	for {
		var ack json.RawMessage
		if err := wsjson.Read(ctx, c, &ack); err != nil {
			return
		}
		k.mu.Lock()
		k.acks = append(k.acks, ack)
		k.signal()
		k.mu.Unlock()
	}
}

// ping pings c every pingEvery until ctx ends.
func ping(ctx context.Context, c *websocket.Conn) {
	tick := time.NewTicker(pingEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if c.Ping(ctx) != nil {
				return
			}
		}
	}
}

// sockState is what the Socket Mode server has seen.
type sockState struct {
	open   []string          // the app tokens of the open connections, sorted
	opened int               // connections ever accepted
	acks   []json.RawMessage // acknowledgements received, oldest first
}

// waitSockets waits until cond holds of the Socket Mode server's state,
// failing the test after Bound.
func (s *Server) waitSockets(what string, cond func(sockState) bool) {
	s.t.Helper()
	k := &s.sock
	deadline := time.NewTimer(Bound)
	defer deadline.Stop()
	for {
		k.mu.Lock()
		st := sockState{opened: k.opened, acks: k.acks}
		for _, tok := range k.conns {
			st.open = append(st.open, tok)
		}
		slices.Sort(st.open)
		ch := k.changed
		k.mu.Unlock()
		if cond(st) {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			s.t.Fatalf("waited %v for %s; open connections %v, opened %d", Bound, what, st.open, st.opened)
		}
	}
}

// WaitConnected waits until exactly the given app tokens have a Socket
// Mode connection open (one each), and opened connections were accepted
// in all (-1: any number).
func (s *Server) WaitConnected(opened int, tokens ...string) {
	s.t.Helper()
	want := slices.Sorted(slices.Values(tokens))
	s.waitSockets("connections of "+strings.Join(want, ","), func(st sockState) bool {
		return slices.Equal(st.open, want) && (opened < 0 || st.opened == opened)
	})
}

// WaitAck waits for the acknowledgement of the envelope id and returns
// its payload (nil when it has none).
func (s *Server) WaitAck(id string) json.RawMessage {
	s.t.Helper()
	var payload json.RawMessage
	s.waitSockets("the acknowledgement of "+id, func(st sockState) bool {
		for _, a := range st.acks {
			var ack struct {
				EnvelopeID string          `json:"envelope_id"`
				Payload    json.RawMessage `json:"payload"`
			}
			if json.Unmarshal(a, &ack) == nil && ack.EnvelopeID == id {
				payload = ack.Payload
				return true
			}
		}
		return false
	})
	return payload
}

// Envelope wraps a payload as Socket Mode delivers it: typ is
// "events_api", "interactive" or "slash_commands".
func Envelope(id, typ string, payload any) map[string]any {
	return map[string]any{"envelope_id": id, "type": typ, "payload": payload, "accepts_response_payload": typ == "interactive"}
}

// Send writes an envelope to every open Socket Mode connection; the test
// fails if there is none.
func (s *Server) Send(envelope any) {
	s.t.Helper()
	k := &s.sock
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.conns) == 0 {
		s.t.Fatal("no Socket Mode connection to send to")
	}
	for c := range k.conns {
		ctx, cancel := context.WithTimeout(context.Background(), Bound)
		err := wsjson.Write(ctx, c, envelope)
		cancel()
		if err != nil {
			s.t.Fatalf("write to a Socket Mode connection: %v", err)
		}
	}
}

// closeSockets closes every open Socket Mode connection.
func (s *Server) closeSockets() {
	k := &s.sock
	k.mu.Lock()
	defer k.mu.Unlock()
	for c := range k.conns {
		c.CloseNow()
	}
}
