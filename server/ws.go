package server

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/server/internal/wshub"
)

// Why a live stream (WebSocket or SSE) ends, as told to its client.
const (
	reasonShutdown = wshub.ReasonShutdown
	reasonSlow     = wshub.ReasonSlow
	reasonRevoked  = wshub.ReasonRevoked
)

// wsClient is a WebSocket of /ws during its replay: the connection, and
// what its client asked for.
type wsClient struct {
	conn   *wshub.Conn
	caller hitl.Caller
	filter streamFilter  // the sessions the client asked for
	after  int64         // with resume, the event the client has seen last
	resume bool          // the client asked to resume after after
	page   *replayPaging // ?replay=page: the first page, not every pending question
}

// handleWebSocket serves GET /ws and GET /ws/userinfo (the name the
// AI-Parrot HITL contract's frontend connects to): the live channel.
//
// On connect it replays, then streams every hitl:question, hitl:cancel
// and hitl:resolved as they happen (see eventMessages), each carrying
// the event's seq. The replay is one of:
//
//   - every pending interaction the caller may see, as hitl:question
//     (hitl:handoff for a handoff; without seq), oldest first, then hitl:replay_done with the
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
// Origins: a request without an Origin header (a non-browser client),
// whose Origin host equals the request's Host, or from an embed origin
// (Options.EmbedOrigins) is accepted; any other browser origin gets 403, so other web pages cannot open the stream with
// the user's credentials. Behind a reverse proxy the proxy must pass the
// original Host header through.
//
// The connection is closed with 1001 (going away) when the server shuts
// down, with 1013 (try again later) when the client falls too far behind,
// and with 1008 when its credentials are revoked; the client reconnects
// and gets the replay. Once the replay is written, the connection is the
// hub's (wshub.Hub): the handler's goroutine, deep from serving the request,
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
	if !s.embedWebSocketOrigin(r) {
		return hitl.Errorf(hitl.EFORBIDDEN, "cross-origin WebSocket refused: the Origin host must be the request's Host, or an embed origin")
	}
	caller := hitl.CallerFrom(r.Context())
	cred := credentialFrom(r.Context())
	// The hub joins the connection before the replay reads what is
	// pending: an interaction created in between is then both replayed
	// and streamed (its created event is skipped), never missed.
	conn := s.hub.Accept(w, r, wshub.Peer{
		Ctx:   context.WithValue(hitl.WithCaller(context.Background(), caller), credentialKey{}, cred),
		Cred:  cred.kind + ":" + string(cred.hash),
		Shows: func(ev *hitl.Event) bool { return filter.shows(caller, ev) },
		// The <hitl-prompt> element offers its subprotocol (and its
		// token as another); the handshake must select it.
		Protocol: embedProtocol,
	})
	if conn == nil {
		return nil // refused (the response is written), or shutting down
	}
	s.replay(r.Context(), &wsClient{conn: conn, caller: caller, filter: filter, after: after, resume: resume, page: page})
	return nil
}

// wsEncoder renders events for the hub as the stream messages
// (eventMessages).
type wsEncoder struct{}

func (wsEncoder) Event(ev *hitl.Event) ([][]byte, []byte, error) {
	msgs, question, err := eventMessages(ev)
	if err != nil || len(msgs) == 0 {
		return nil, question, err
	}
	data := make([][]byte, len(msgs))
	for i, m := range msgs {
		data[i] = m.data
	}
	return data, question, nil
}

func (wsEncoder) Question(in *hitl.Interaction) ([]byte, error) {
	_, msg := pendingMessage(in)
	return marshalMessage(msg)
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
