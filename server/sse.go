package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
	"github.com/hitl-sh/hitl/server/internal/wshub"
)

// Server-Sent Events timing.
const (
	// sseKeepalive is how often a comment is sent on an idle stream, so
	// proxies keep it open and dead peers are noticed.
	sseKeepalive = 15 * time.Second
	// sseWriteTimeout bounds each write; a client that cannot take an
	// event in this time is dropped.
	sseWriteTimeout = 10 * time.Second
	// sseRetry is the reconnection delay suggested to clients, in ms.
	sseRetry = 2000
)

// handleEvents serves GET /api/v1/events: the WebSocket's messages as
// Server-Sent Events. Each event is
//
//	event: hitl:question (or hitl:handoff, hitl:cancel, hitl:resolved, hitl:replay_done)
//	data: the same JSON as on the WebSocket
//	id: the event's sequence number in the event log
//
// An answer gives two events, hitl:resolved and hitl:cancel (see
// eventMessages); only the second carries the id, so a client that drops
// between them resumes before both.
//
// A client that sends Last-Event-ID (or ?last_event_id=) gets, in order,
// every event it missed from the log, then hitl:replay_done (resumed)
// with the id it is complete up to, then live events, each once. Without
// it, the client first gets every pending interaction as hitl:question
// (hitl:handoff for a handoff), without an id, then hitl:replay_done with their ids and, as its id, the
// newest event sequence it is complete up to, then live events. Events
// that clients are not told about (such as notified) are not sent; a
// resuming client skips them again. ?session_id=S (repeatable) limits the
// stream to the interactions of those sessions, as on the WebSocket.
//
// The stream ends when the server shuts down or the client falls too far
// behind; EventSource then reconnects after the suggested 2 s with
// Last-Event-ID and loses nothing.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) error {
	after, resume, err := resumePoint(r, "last_event_id", true)
	if err != nil {
		return err
	}
	filter, err := parseStreamFilter(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	caller := hitl.CallerFrom(ctx)
	rc := http.NewResponseController(w)
	// The stream outlives any read deadline set for the request (its body
	// is read): left in place, it would end the request's context, and
	// the stream with it, when it passed.
	if err := rc.SetReadDeadline(time.Time{}); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return fmt.Errorf("events: clear the read deadline: %w", err)
	}

	// Subscribe before reading the log or the pending list, so nothing
	// committed in between is missed; duplicates are skipped instead.
	sub := s.broker.Subscribe()
	defer sub.Close()
	if resume {
		if resume, err = s.canResumeSSE(ctx, after, sub.Start); err != nil {
			return err
		}
	}
	var (
		list *replayList // shared with every stream of the same audience
		upTo int64
	)
	if !resume {
		if list, upTo, err = s.replaySet(ctx, caller); err != nil {
			return fmt.Errorf("events: %w", err)
		}
	}

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s.metrics.streamsOpen.WithLabelValues("sse").Inc()
	defer s.metrics.streamsOpen.WithLabelValues("sse").Dec()

	sw := &sseWriter{w: w, rc: rc}
	if err := sw.line("retry: " + strconv.Itoa(sseRetry)); err != nil {
		return nil
	}
	st := &sseStream{Server: s, sw: sw, caller: caller, filter: filter, sent: sub.Start}
	if resume {
		err = st.resume(ctx, after)
	} else {
		err = st.replay(list, upTo)
	}
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, errClientGone) {
			s.log.Error("events: replay", "error", err)
		}
		return nil
	}
	st.follow(ctx, sub)
	return nil
}

// canResumeSSE reports whether a stream can resume after the event id
// after, its feed starting at start: not when the id is from another
// event log (the database was replaced), nor when events after it were
// purged (the end of a question the client shows may be among them); the
// stream then starts over from what is pending.
func (s *Server) canResumeSSE(ctx context.Context, after, start int64) (bool, error) {
	if after > start {
		// Ahead of this server's feed: either another replica's feed is
		// ahead (the log has it), or the id is from another event log.
		last, err := s.broker.LastEventSeq(ctx)
		if err != nil {
			return false, fmt.Errorf("events: read last event sequence: %w", err)
		}
		if after > last {
			return false, nil
		}
	}
	purged, err := s.broker.PurgedThrough(ctx)
	if err != nil {
		return false, fmt.Errorf("events: read how far the event log was purged: %w", err)
	}
	return after >= purged, nil
}

// errClientGone stops a stream whose client cannot be written to.
var errClientGone = errors.New("client gone")

// sseStream is one open event stream.
type sseStream struct {
	*Server
	sw     *sseWriter
	caller hitl.Caller
	filter streamFilter
	// sent is the newest seq the client has (or need not have); live
	// events at or before it are skipped.
	sent int64
	// replayed holds the interactions of the pending list sent, whose
	// created events may still come live until the stream passes upTo.
	replayed map[string]bool
	upTo     int64
}

// resume sends the logged events after after, up to the subscription's
// start (the subscription delivers the rest), then hitl:replay_done.
func (st *sseStream) resume(ctx context.Context, after int64) error {
	sent, err := st.walkLog(ctx, st.caller, st.filter, after, st.sent, func(ev *hitl.Event, msgs []streamMessage) error {
		return st.sw.event(msgs, ev.Seq)
	})
	if err != nil {
		return err
	}
	st.sent = max(sent, after)
	return st.sw.replayDone(st.sent, true, nil)
}

// replay sends the pending list (the frames the WebSocket replays use,
// encoded once for every stream), then hitl:replay_done.
func (st *sseStream) replay(list *replayList, upTo int64) error {
	var ids []string // the ids sent, when the filter leaves some out
	for _, in := range list.pending {
		if !st.filter.match(in) {
			continue
		}
		frame, err := st.hub.QuestionFrame(in)
		if err != nil {
			return fmt.Errorf("encode a pending interaction: %w", err)
		}
		if err := st.sw.send(pendingType(in), wshub.Payload(frame), 0, false); err != nil {
			return err
		}
		if !st.filter.all() {
			ids = append(ids, in.ID)
		}
	}
	pending := list.idsJSON()
	if !st.filter.all() {
		pending = idsJSON(ids)
	}
	if upTo > st.sent {
		st.replayed, st.upTo = list.ids, upTo
	}
	return st.sw.replayDone(st.sent, false, pending)
}

// follow sends live events until the client goes, the subscription ends
// (shutdown, or a client too slow) or the credentials no longer hold.
func (st *sseStream) follow(ctx context.Context, sub *broker.Subscription) {
	keepalive := time.NewTicker(sseKeepalive)
	defer keepalive.Stop()
	recheck := st.streamRecheck()
	defer recheck.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-keepalive.C:
			if st.sw.line(": ping") != nil {
				return
			}
		case <-recheck.C:
			if !st.stillValid(ctx) {
				// EventSource reconnects, and gets 401.
				_ = st.sw.line(": " + reasonRevoked)
				return
			}
		case ev, ok := <-sub.C():
			if !ok {
				_ = st.sw.line(": " + endComment(sub.Err()))
				return
			}
			if st.live(ev) != nil {
				return
			}
		}
	}
}

// live sends a live event, unless the client has it or is not shown it.
func (st *sseStream) live(ev *hitl.Event) error {
	if ev.Seq <= st.sent {
		return nil
	}
	st.sent = ev.Seq
	if !st.filter.shows(st.caller, ev) {
		return nil
	}
	if st.replayed != nil {
		repeat := ev.Type == hitl.EventCreated && st.replayed[ev.InteractionID]
		if ev.Seq >= st.upTo {
			st.replayed = nil
		}
		if repeat {
			return nil // listed and sent already
		}
	}
	msgs, _, err := eventMessages(ev)
	if err != nil || len(msgs) == 0 {
		return err
	}
	return st.sw.event(msgs, ev.Seq)
}

// endComment says why a stream ended, as a comment clients ignore.
func endComment(err error) string {
	if errors.Is(err, broker.ErrClosed) {
		return reasonShutdown
	}
	return reasonSlow
}
