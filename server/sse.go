package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/broker"
)

// Server-Sent Events timing and limits.
const (
	// sseKeepalive is how often a comment is sent on an idle stream, so
	// proxies keep it open and dead peers are noticed.
	sseKeepalive = 15 * time.Second
	// sseWriteTimeout bounds each write; a client that cannot take an
	// event in this time is dropped.
	sseWriteTimeout = 10 * time.Second
	// sseRetry is the reconnection delay suggested to clients, in ms.
	sseRetry = 2000
	// sseReplayPage is how many logged events are read at a time when a
	// client resumes.
	sseReplayPage = 500
)

// handleEvents serves GET /api/v1/events: the WebSocket's messages as
// Server-Sent Events. Each event is
//
//	event: hitl:question (or hitl:cancel, hitl:resolved)
//	data: the same JSON as on the WebSocket
//	id: the event's sequence number in the event log
//
// A client that sends Last-Event-ID (or ?last_event_id=) gets, in order,
// every event it missed from the log and then live events, each once.
// Without it, the client first gets every pending interaction as
// hitl:question with id set to the newest event sequence at that moment
// (it has everything up to there), then live events. Events that clients
// are not told about (such as notified) are not sent; a resuming client
// skips them again.
//
// The stream ends when the server shuts down or the client falls too far
// behind; EventSource then reconnects after the suggested 2 s with
// Last-Event-ID and loses nothing.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) error {
	after, resume, err := lastEventID(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	caller := hitl.CallerFrom(ctx)

	// Subscribe before reading the log or the pending list, so nothing
	// committed in between is missed; duplicates are skipped instead.
	sub := s.broker.Subscribe()
	defer sub.Close()
	if resume && after > sub.Start {
		// Ahead of this server's feed: either another replica's feed is
		// ahead (the log has it), or the id is from another event log.
		last, err := s.broker.Store().LastEventSeq(ctx)
		if err != nil {
			return fmt.Errorf("events: read last event sequence: %w", err)
		}
		if after > last {
			// Not an id from this event log (the database was replaced):
			// start over from what is pending.
			resume = false
		}
	}
	var pending []*hitl.Interaction
	if !resume {
		if pending, err = s.pendingInteractions(ctx); err != nil {
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

	sw := &sseWriter{w: w, rc: http.NewResponseController(w)}
	sw.buf.WriteString("retry: " + strconv.Itoa(sseRetry) + "\n\n")
	if err := sw.flush(); err != nil {
		return nil
	}

	// sent is the newest sequence the client has (or need not have);
	// live events at or before it are skipped.
	sent := sub.Start
	replayed := make(map[string]bool, len(pending))
	if resume {
		if sent, err = s.replayLog(ctx, sw, caller, after, sub.Start); err != nil {
			if ctx.Err() == nil {
				s.log.Error("events: replay event log", "after", after, "error", err)
			}
			return nil
		}
	} else {
		for _, in := range pending {
			if err := sw.event(newQuestionMessage(in), sub.Start); err != nil {
				return nil
			}
			replayed[in.ID] = true
		}
	}

	keepalive := time.NewTicker(sseKeepalive)
	defer keepalive.Stop()
	recheck := s.streamRecheck()
	defer recheck.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-keepalive.C:
			sw.buf.WriteString(": ping\n\n")
			if err := sw.flush(); err != nil {
				return nil
			}
		case <-recheck.C:
			if !s.stillValid(ctx) {
				// EventSource reconnects, and gets 401.
				sw.buf.WriteString(": " + reasonRevoked + "\n\n")
				_ = sw.flush()
				return nil
			}
		case ev, ok := <-sub.C():
			if !ok {
				sw.buf.WriteString(": " + endComment(sub.Err()) + "\n\n")
				_ = sw.flush()
				return nil
			}
			if ev.Seq <= sent {
				continue
			}
			sent = ev.Seq
			if !visible(caller, ev) {
				continue // the caller may not see this interaction
			}
			if ev.Type == hitl.EventCreated && replayed[ev.InteractionID] {
				delete(replayed, ev.InteractionID) // listed and sent already
				continue
			}
			msg, ok := messageFor(ev)
			if !ok {
				continue
			}
			if err := sw.event(msg, ev.Seq); err != nil {
				return nil
			}
		}
	}
}

// replayLog sends the logged events with sequence in (after, upto] that
// the caller may see, page by page, and returns the newest sequence it
// covered.
func (s *Server) replayLog(ctx context.Context, sw *sseWriter, caller hitl.Caller, after, upto int64) (int64, error) {
	for after < upto {
		evs, err := s.broker.Store().Events(ctx, after, sseReplayPage)
		if err != nil {
			return after, err
		}
		if len(evs) == 0 {
			break
		}
		for _, ev := range evs {
			if ev.Seq > upto {
				return upto, nil // the subscription delivers the rest
			}
			after = ev.Seq
			if !visible(caller, ev) {
				continue
			}
			if msg, ok := messageFor(ev); ok {
				if err := sw.event(msg, ev.Seq); err != nil {
					return after, err
				}
			}
		}
	}
	return max(after, upto), nil
}

// lastEventID reads the client's resume point from the Last-Event-ID
// header (sent by EventSource on reconnect) or, failing that, the
// last_event_id query parameter. resume is false when neither is given.
func lastEventID(r *http.Request) (after int64, resume bool, err error) {
	v := strings.TrimSpace(r.Header.Get("Last-Event-ID"))
	if v == "" {
		v = strings.TrimSpace(r.URL.Query().Get("last_event_id"))
	}
	if v == "" {
		return 0, false, nil
	}
	after, err = strconv.ParseInt(v, 10, 64)
	if err != nil || after < 0 {
		return 0, false, hitl.Errorf(hitl.EINVALID, "Last-Event-ID must be the id of an event from this stream (a non-negative integer)")
	}
	return after, true, nil
}

// endComment says why a stream ended, as a comment clients ignore.
func endComment(err error) string {
	if errors.Is(err, broker.ErrClosed) {
		return reasonShutdown
	}
	return reasonSlow
}

// sseWriter writes Server-Sent Events, each flushed at once and within
// sseWriteTimeout.
type sseWriter struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	buf bytes.Buffer
}

// event sends msg (a stream message) as an event named after its type.
func (sw *sseWriter) event(msg any, id int64) error {
	data, err := marshalMessage(msg)
	if err != nil {
		return err
	}
	sw.buf.WriteString("event: " + messageType(msg) + "\n")
	sw.buf.WriteString("data: ")
	sw.buf.Write(data) // compact JSON: no raw newlines
	sw.buf.WriteString("\nid: " + strconv.FormatInt(id, 10) + "\n\n")
	return sw.flush()
}

// flush writes what is buffered and flushes it to the client.
func (sw *sseWriter) flush() error {
	defer sw.buf.Reset()
	if err := sw.rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	if _, err := sw.w.Write(sw.buf.Bytes()); err != nil {
		return err
	}
	return sw.rc.Flush()
}

// messageType returns the type of a stream message from messageFor.
func messageType(msg any) string {
	switch m := msg.(type) {
	case questionMessage:
		return m.Type
	case cancelMessage:
		return m.Type
	case resolvedMessage:
		return m.Type
	}
	return "message"
}
