package server

import (
	"context"

	"github.com/hitl-sh/hitl"
)

// logReplayPage is how many logged events are read at a time when a
// client resumes a stream.
const logReplayPage = 500

// walkLog calls fn, in order, with every logged event with seq in
// (after, upto] that caller may see (the engine gives only those) and f
// lets through, and its messages, reading the log a page at a time. It
// returns the newest seq it covered: upto, or less when the log ends
// before (another replica's events not yet committed everywhere), or when
// fn fails.
func (s *Server) walkLog(ctx context.Context, caller hitl.Caller, f streamFilter, after, upto int64, fn func(ev *hitl.Event, msgs []streamMessage) error) (int64, error) {
	ctx = hitl.WithCaller(ctx, caller)
	for after < upto {
		evs, through, err := s.broker.Events(ctx, after, logReplayPage)
		if err != nil {
			return after, err
		}
		if through == after {
			break
		}
		for _, ev := range evs {
			if ev.Seq > upto {
				return upto, nil // the subscription delivers the rest
			}
			if f.match(ev.Interaction) {
				msgs, _, err := eventMessages(ev)
				if err != nil {
					return after, err
				}
				if len(msgs) > 0 {
					if err := fn(ev, msgs); err != nil {
						return after, err
					}
				}
			}
			after = ev.Seq
		}
		if through > upto {
			return upto, nil
		}
		after = through
	}
	return max(after, upto), nil
}
