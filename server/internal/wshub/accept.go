package wshub

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"time"

	"github.com/gobwas/ws"
	"github.com/hitl-sh/hitl"
)

// Close reasons sent to clients (at most 123 bytes each).
const (
	ReasonShutdown = "server is shutting down"
	ReasonSlow     = "client too slow; reconnect to get every pending question"
	ReasonRevoked  = "credentials revoked or expired; log in again"
)

// statusTryAgainLater is RFC 6455's 1013, which the ws package does not
// name.
const statusTryAgainLater ws.StatusCode = 1013

// Peer is who a connection serves, and what it is shown.
type Peer struct {
	// Ctx carries the caller and credential, for Options.StillValid.
	Ctx context.Context
	// Cred identifies the credential: connections with the same one are
	// rechecked once.
	Cred string
	// Shows reports whether the client is sent an event; nil means every
	// event.
	Shows func(*hitl.Event) bool
	// Protocol, when set, is the subprotocol the handshake selects when
	// the client offers it.
	Protocol string
}

// Accept answers r's WebSocket handshake on w and adds the connection to
// the hub. It returns nil when the handshake failed (the response is
// written: 400, 426 …) or the hub has shut down (the connection is closed
// with 1001).
//
// The connection is returned in its replay: live events after its Start
// are held, not written, while the caller writes on this goroutine what
// the client missed before (Replay), until GoLive hands the connection to
// the hub's writers. A fresh goroutine reads the client's frames meanwhile.
func (h *Hub) Accept(w http.ResponseWriter, r *http.Request, peer Peer) *Conn {
	// The handshake response is written within writeTimeout; after it,
	// the hub bounds each write itself.
	up := ws.HTTPUpgrader{Timeout: writeTimeout}
	if peer.Protocol != "" {
		up.Protocol = func(p string) bool { return p == peer.Protocol }
	}
	nc, rw, _, err := up.Upgrade(r, w)
	if err != nil {
		h.log.Debug("websocket handshake refused", "remote_addr", r.RemoteAddr, "error", err)
		if nc != nil {
			_ = nc.Close()
		}
		return nil
	}
	if peer.Shows == nil {
		peer.Shows = func(*hitl.Event) bool { return true }
	}
	c := &Conn{
		hub:   h,
		nc:    nc,
		r:     nc,
		ctx:   peer.Ctx,
		cred:  peer.Cred,
		shows: peer.Shows,
		// The replay is written by the caller alone.
		replaying: true,
		busy:      true,
	}
	if n := rw.Reader.Buffered(); n > 0 {
		// The client wrote before it saw the handshake's answer.
		ahead, _ := rw.Reader.Peek(n)
		c.r = io.MultiReader(bytes.NewReader(bytes.Clone(ahead)), nc)
	}
	// Join before the caller reads what to replay: an event in between is
	// then both replayed and streamed, never missed.
	if !h.add(c) {
		_ = nc.SetWriteDeadline(time.Now().Add(writeTimeout))
		_ = ws.WriteFrame(nc, ws.NewCloseFrame(ws.NewCloseFrameBody(ws.StatusGoingAway, ReasonShutdown)))
		_ = nc.Close()
		return nil
	}
	go c.read()
	return c
}
