package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gobwas/ws"
	"github.com/hitl-sh/hitl"
)

// Close reasons sent to WebSocket clients (at most 123 bytes each).
const (
	reasonShutdown = "server is shutting down"
	reasonSlow     = "client too slow; reconnect to get every pending question"
	reasonRevoked  = "credentials revoked or expired; log in again"
)

// handleWebSocket serves GET /ws and GET /ws/userinfo (the name the
// AI-Parrot HITL contract's frontend connects to): the live channel.
//
// On connect it replays, then streams every hitl:question, hitl:cancel
// and hitl:resolved as they happen (see eventMessages), each carrying
// the event's seq. The replay is one of:
//
//   - every pending interaction the caller may see, as hitl:question
//     (without seq), oldest first, then hitl:replay_done with the
//     pending ids and the seq to resume from;
//   - with ?after=SEQ (a seq the client got earlier), the messages of
//     every event it missed since, in order, then hitl:replay_done
//     (resumed); when SEQ is not from this event log or too far behind,
//     the full replay above instead.
//
// ?replay=page&limit=N&sort=deadline|newest replaces the full replay with
// the first page of pending questions and their counts (replayPage), for
// an inbox that fetches the rest on demand.
//
// ?session_id=S (repeatable) limits the stream, replay included, to the
// interactions of those sessions. Messages the client sends are read and
// ignored.
//
// Origins: a request without an Origin header (a non-browser client) or
// whose Origin host equals the request's Host is accepted; any other
// browser origin gets 403, so other web pages cannot open the stream with
// the user's credentials. Behind a reverse proxy the proxy must pass the
// original Host header through.
//
// The connection is closed with 1001 (going away) when the server shuts
// down, with 1013 (try again later) when the client falls too far behind,
// and with 1008 when its credentials are revoked; the client reconnects
// and gets the replay. Once the replay is written, the connection is the
// hub's (wsHub): the handler's goroutine, deep from serving the request,
// ends, and a fresh one reads the client's frames.
func (s *Server) handleWebSocket(w http.ResponseWriter, r *http.Request) error {
	if !headerHasToken(r.Header, "Connection", "upgrade") || !headerHasToken(r.Header, "Upgrade", "websocket") {
		w.Header().Set("Connection", "Upgrade")
		w.Header().Set("Upgrade", "websocket")
		return hitl.Errorf(hitl.EINVALID, "this endpoint speaks WebSocket only: send Connection: Upgrade and Upgrade: websocket")
	}
	filter, err := parseStreamFilter(r)
	if err != nil {
		return err
	}
	after, resume, err := resumePoint(r, "after", false)
	if err != nil {
		return err
	}
	page, err := parseReplayPaging(r, filter)
	if err != nil {
		return err
	}
	if !sameOrigin(r) {
		return hitl.Errorf(hitl.EFORBIDDEN, "cross-origin WebSocket refused: the Origin host must be the request's Host")
	}
	// The handshake response is written within wsWriteTimeout; after it,
	// the hub bounds each write itself.
	nc, rw, _, err := (ws.HTTPUpgrader{Timeout: wsWriteTimeout}).Upgrade(r, w)
	if err != nil {
		// The upgrader has written the response (400, 426 …).
		s.log.Debug("websocket handshake refused", "remote_addr", r.RemoteAddr, "error", err)
		if nc != nil {
			_ = nc.Close()
		}
		return nil
	}
	caller := hitl.CallerFrom(r.Context())
	cred := credentialFrom(r.Context())
	c := &wsConn{
		hub:    s.hub,
		nc:     nc,
		r:      nc,
		caller: caller,
		ctx:    context.WithValue(hitl.WithCaller(context.Background(), caller), credentialKey{}, cred),
		cred:   cred.kind + ":" + string(cred.hash),
		filter: filter,
		after:  after,
		resume: resume,
		page:   page,
		// The replay is written below, by this goroutine alone.
		replaying: true,
		busy:      true,
	}
	if n := rw.Reader.Buffered(); n > 0 {
		// The client wrote before it saw the handshake's answer.
		ahead, _ := rw.Reader.Peek(n)
		c.r = io.MultiReader(bytes.NewReader(bytes.Clone(ahead)), nc)
	}
	// Join before reading what is pending: an interaction created in
	// between is then both replayed and streamed (its created event is
	// skipped), never missed.
	if !s.hub.add(c) {
		_ = nc.SetWriteDeadline(time.Now().Add(wsWriteTimeout))
		_ = ws.WriteFrame(nc, ws.NewCloseFrame(ws.NewCloseFrameBody(ws.StatusGoingAway, reasonShutdown)))
		_ = nc.Close()
		return nil
	}
	go c.read()
	s.replay(r.Context(), c)
	return nil
}

// headerHasToken reports whether the comma-separated header key lists
// token, in any case.
func headerHasToken(h http.Header, key, token string) bool {
	for _, v := range h.Values(key) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// sameOrigin reports whether r comes from no browser page (no Origin) or
// from a page of this server (the Origin's host is the request's Host).
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}
