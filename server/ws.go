package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
)

// WebSocket timing and limits.
const (
	// wsPingInterval is how often an idle connection is pinged, so dead
	// peers are noticed and proxies keep the connection open.
	wsPingInterval = 30 * time.Second
	// wsWriteTimeout bounds each message write (and each ping's round
	// trip); a client that cannot take a message in this time is dropped.
	wsWriteTimeout = 10 * time.Second
	// wsReadLimit bounds one client message. Clients have nothing to say
	// yet; what they send is read and ignored.
	wsReadLimit = 4 << 10
)

// Close reasons sent to WebSocket clients (at most 123 bytes each).
const (
	reasonShutdown = "server is shutting down"
	reasonSlow     = "client too slow; reconnect to get every pending question"
	reasonInternal = "internal error"
	reasonRevoked  = "credentials revoked or expired; log in again"
)

// handleWebSocket serves GET /ws: the second seed's live channel. On
// connect it sends every pending interaction as hitl:question, oldest
// first, then every hitl:question, hitl:cancel and hitl:resolved as they
// happen. Messages the client sends are read and ignored.
//
// Origins: a request without an Origin header (a non-browser client) or
// whose Origin host equals the request's Host is accepted; any other
// browser origin gets 403, so other web pages cannot open the stream with
// the user's credentials. Behind a reverse proxy the proxy must pass the
// original Host header through.
//
// The connection is closed with 1001 (going away) when the server shuts
// down, and with 1013 (try again later) when the client falls too far
// behind; in both cases the client reconnects and gets the replay.
func (s *Server) handleWebSocket(w http.ResponseWriter, r *http.Request) error {
	// A hijacked connection keeps the http.Server's write deadline; the
	// WebSocket bounds each write itself.
	if err := http.NewResponseController(w).SetWriteDeadline(time.Time{}); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return fmt.Errorf("websocket: clear write deadline: %w", err)
	}
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{})
	if err != nil {
		// Accept has written the response (400, 403, 426 …).
		s.log.Debug("websocket handshake refused", "remote_addr", r.RemoteAddr, "origin", r.Header.Get("Origin"), "error", err)
		return nil
	}
	s.metrics.streamsOpen.WithLabelValues("ws").Inc()
	conn.SetReadLimit(wsReadLimit)

	// The connection is hijacked, so the handler returns and the stream
	// runs on a goroutine of its own: net/http's connection goroutine,
	// whose stack grew deep serving the handshake, is released (about
	// 8 KiB per open WebSocket). The stream's context keeps the request's
	// values but not its cancellation, which comes when the handler returns.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	go func() {
		defer s.metrics.streamsOpen.WithLabelValues("ws").Dec()
		defer cancel()
		go func() {
			defer cancel()
			discardMessages(ctx, conn)
		}()
		code, reason := s.streamWebSocket(ctx, conn)
		if code == 0 {
			_ = conn.CloseNow()
			return
		}
		// Close before cancel (deferred): the close handshake needs the
		// reader.
		_ = conn.Close(code, reason)
	}()
	return nil
}

// streamWebSocket sends the replay and then live events until the
// subscription or ctx ends. It returns the close status to send, or 0 when
// the connection is already unusable.
func (s *Server) streamWebSocket(ctx context.Context, conn *websocket.Conn) (websocket.StatusCode, string) {
	// Subscribe before reading what is pending: an interaction created in
	// between is then both listed and streamed (its created event is
	// skipped below), never missed.
	sub := s.broker.Subscribe()
	defer sub.Close()
	caller := hitl.CallerFrom(ctx)
	pending, err := s.pendingInteractions(ctx) // only what the caller may see
	if err != nil {
		if ctx.Err() != nil {
			return 0, ""
		}
		s.log.Error("websocket: replay pending interactions", "error", err)
		return websocket.StatusInternalError, reasonInternal
	}
	// A replayed interaction's created event is in the log up to upTo (it
	// was committed with the interaction), so the stream can only repeat
	// it until it passes upTo; after that, or when nothing was logged
	// between subscribing and reading, the replayed set is dropped rather
	// than held, one entry per pending interaction, for the connection's
	// life.
	upTo, err := s.broker.Store().LastEventSeq(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return 0, ""
		}
		s.log.Error("websocket: read the event log position", "error", err)
		return websocket.StatusInternalError, reasonInternal
	}
	var replayed map[string]bool
	if upTo > sub.Start {
		replayed = make(map[string]bool, len(pending))
	}
	for _, in := range pending {
		if err := writeWS(ctx, conn, newQuestionMessage(in)); err != nil {
			return 0, ""
		}
		if replayed != nil {
			replayed[in.ID] = true
		}
	}
	// Pings go out from this goroutine, between messages, rather than
	// from one more goroutine per connection: at ten thousand connections
	// the stacks add up.
	ping := time.NewTicker(wsPingInterval)
	defer ping.Stop()
	recheck := s.streamRecheck()
	defer recheck.Stop()
	for {
		select {
		case <-ctx.Done():
			return 0, ""
		case <-ping.C:
			if err := pingPeer(ctx, conn); err != nil {
				return 0, ""
			}
		case <-recheck.C:
			if !s.stillValid(ctx) {
				return websocket.StatusPolicyViolation, reasonRevoked
			}
		case ev, ok := <-sub.C():
			if !ok {
				return closeStatus(sub.Err())
			}
			if replayed != nil {
				repeat := ev.Type == hitl.EventCreated && replayed[ev.InteractionID]
				if ev.Seq >= upTo {
					replayed = nil
				}
				if repeat {
					continue // already sent in the replay
				}
			}
			if !visible(caller, ev) {
				continue // the caller may not see this interaction
			}
			data, err := encodeEvent(ev)
			if err != nil {
				s.log.Error("websocket: encode event", "seq", ev.Seq, "error", err)
				return websocket.StatusInternalError, reasonInternal
			}
			if data == nil {
				continue // clients are not told about this event
			}
			if err := writeWSData(ctx, conn, data); err != nil {
				return 0, ""
			}
		}
	}
}

// encodedEvent is an event's stream message, encoded once and shared by
// every WebSocket that sends it.
type encodedEvent struct {
	ev   *hitl.Event
	data []byte // nil when clients are not told about the event
}

// lastEncoded caches the newest event encoded. Every subscriber receives
// the same *hitl.Event, at about the same time, so one new question fanned
// out to ten thousand WebSockets is encoded a handful of times instead of
// ten thousand. The cache holds the event, so its address cannot be reused
// while cached.
var lastEncoded atomic.Pointer[encodedEvent]

// encodeEvent returns ev's stream message as JSON, or nil for an event
// clients are not told about.
func encodeEvent(ev *hitl.Event) ([]byte, error) {
	if e := lastEncoded.Load(); e != nil && e.ev == ev {
		return e.data, nil
	}
	e := &encodedEvent{ev: ev}
	if msg, ok := messageFor(ev); ok {
		data, err := marshalMessage(msg)
		if err != nil {
			return nil, err
		}
		e.data = data
	}
	lastEncoded.Store(e)
	return e.data, nil
}

// closeStatus is the WebSocket close status for a subscription that ended
// with err.
func closeStatus(err error) (websocket.StatusCode, string) {
	if errors.Is(err, broker.ErrClosed) {
		return websocket.StatusGoingAway, reasonShutdown
	}
	return websocket.StatusTryAgainLater, reasonSlow
}

// writeWS sends msg as one JSON text message, within wsWriteTimeout (the
// library closes the connection when a write times out).
func writeWS(ctx context.Context, conn *websocket.Conn, msg any) error {
	data, err := marshalMessage(msg)
	if err != nil {
		return err
	}
	return writeWSData(ctx, conn, data)
}

// writeWSData sends data as one text message, within wsWriteTimeout.
func writeWSData(ctx context.Context, conn *websocket.Conn, data []byte) error {
	ctx, cancel := context.WithTimeout(ctx, wsWriteTimeout)
	defer cancel()
	return conn.Write(ctx, websocket.MessageText, data)
}

// discardMessages reads and drops client messages until the connection
// fails or closes, so control frames (pings, pongs, close) are handled.
func discardMessages(ctx context.Context, conn *websocket.Conn) {
	for {
		_, rd, err := conn.Reader(ctx)
		if err == nil {
			_, err = io.Copy(io.Discard, rd)
		}
		if errors.Is(err, websocket.ErrMessageTooBig) {
			// The library has sent 1009; finish the close handshake rather
			// than reset the connection under the client's feet.
			_ = conn.Close(websocket.StatusMessageTooBig, "")
		}
		if err != nil {
			return
		}
	}
}

// pingPeer pings the peer and waits for its pong, for up to wsWriteTimeout.
func pingPeer(ctx context.Context, conn *websocket.Conn) error {
	ctx, cancel := context.WithTimeout(ctx, wsWriteTimeout)
	defer cancel()
	return conn.Ping(ctx)
}

// pendingInteractions returns every pending interaction, oldest first: the
// replay a live stream starts with.
func (s *Server) pendingInteractions(ctx context.Context) ([]*hitl.Interaction, error) {
	var all []*hitl.Interaction
	f := hitl.ListFilter{Status: hitl.StatusPending, Limit: hitl.MaxListLimit}
	for {
		page, next, err := s.broker.List(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("list pending interactions: %w", err)
		}
		all = append(all, page...)
		if next == "" || next == f.Cursor {
			break
		}
		f.Cursor = next
	}
	slices.Reverse(all) // the store lists newest first
	return all, nil
}

// marshalMessage renders a stream message as compact JSON on one line,
// without HTML escaping (as the HTTP API writes JSON).
func marshalMessage(msg any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(msg); err != nil {
		return nil, fmt.Errorf("encode stream message: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
