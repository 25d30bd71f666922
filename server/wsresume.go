package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/hitl-sh/hitl"
)

// maxResumeEvents bounds how far behind a WebSocket client may resume
// from: one further behind gets the pending list instead, which then
// costs less than the log.
const maxResumeEvents = 10000

// errConnDropped stops a replay whose connection was dropped.
var errConnDropped = errors.New("connection dropped")

// resumeWS writes to c, which resumes after c.after, the messages of every
// logged event it missed up to c.conn.Start() (later ones come live), then
// hitl:replay_done (resumed, at the newer of the two), and takes c live.
// It reports false, having written nothing, when c cannot resume: c.after
// is not from this event log (the database was replaced), is more than
// maxResumeEvents behind, or is before events a purge deleted (the end of
// a question the client shows may be among them).
func (s *Server) resumeWS(ctx context.Context, c *wsClient) (bool, error) {
	start := c.conn.Start()
	last, err := s.broker.LastEventSeq(ctx)
	if err != nil {
		return false, fmt.Errorf("read the event log position: %w", err)
	}
	purged, err := s.broker.PurgedThrough(ctx)
	if err != nil {
		return false, fmt.Errorf("read how far the event log was purged: %w", err)
	}
	if c.after > last || start-c.after > maxResumeEvents || c.after < purged {
		return false, nil
	}
	rw := c.conn.Replay()
	_, err = s.walkLog(ctx, c.caller, c.filter, c.after, start, func(_ *hitl.Event, msgs []streamMessage) error {
		for _, m := range msgs {
			if !rw.AddMessage(m.data) {
				return errConnDropped
			}
		}
		return nil
	})
	switch {
	case errors.Is(err, errConnDropped):
		return true, nil
	case err != nil:
		return true, err
	}
	// When the client is ahead of this server's feed (another replica's
	// events not yet here), the feed's events up to c.after are skipped.
	if !finishReplay(rw, max(start, c.after), true, nil) {
		return true, nil
	}
	c.conn.GoLive(nil, 0, c.after)
	return true, nil
}
