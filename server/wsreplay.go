package server

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"

	"github.com/hitl-sh/hitl"
)

// replay writes every pending interaction the caller may see to c, oldest
// first, then hands c to the hub with the live events that arrived
// meanwhile.
func (s *Server) replay(ctx context.Context, c *wsConn) {
	// A replayed interaction's created event is in the log up to upTo (it
	// was committed with the interaction), so the stream can only repeat
	// it until it passes upTo.
	pending, upTo, err := s.replaySet(ctx, c.caller)
	if err != nil {
		s.log.Error("websocket: read the pending interactions to replay", "error", err)
		c.drop()
		return
	}
	var replayed map[string]bool
	if upTo > c.start {
		replayed = make(map[string]bool, len(pending))
	}
	const chunk = 64 // frames per write
	var bufs net.Buffers
	for i, in := range pending {
		frame, err := s.hub.frames.question(in)
		if err != nil {
			s.log.Error("websocket: encode a pending interaction", "interaction_id", in.ID, "error", err)
			c.drop()
			return
		}
		bufs = append(bufs, frame)
		if replayed != nil {
			replayed[in.ID] = true
		}
		if len(bufs) == chunk || i == len(pending)-1 {
			if !c.write(bufs, false, false) {
				return
			}
			bufs = bufs[:0]
		}
	}

	c.mu.Lock()
	c.replaying = false
	c.replayed, c.upTo = replayed, upTo
	if !c.closing {
		for _, e := range c.held {
			if !c.repeatLocked(e.ev) {
				c.queue = append(c.queue, e.frame)
			}
		}
	}
	c.held = nil
	c.mu.Unlock()
	c.flush(true)
}

// replaySet returns the pending interactions caller may see, oldest first,
// and the event log position they are complete up to. When nothing has
// been logged since the same caller's last replay, that replay's list is
// reused: ten thousand inboxes reconnecting after a restart cost one read
// of the store, not ten thousand.
func (s *Server) replaySet(ctx context.Context, caller hitl.Caller) ([]*hitl.Interaction, int64, error) {
	before, err := s.broker.Store().LastEventSeq(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("read the event log position: %w", err)
	}
	key := audienceKey(caller)
	if pending, ok := s.replays.get(key, before); ok {
		return pending, before, nil
	}
	// Every event up to before has reached this server, so none below it
	// is still committing (a shared store commits out of order).
	complete := s.broker.Delivered() >= before
	pending, err := s.pendingInteractions(ctx) // only what the caller may see
	if err != nil {
		return nil, 0, err
	}
	after, err := s.broker.Store().LastEventSeq(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("read the event log position: %w", err)
	}
	if complete && after == before {
		// Nothing happened while reading: the list is the state at before.
		s.replays.put(key, before, pending)
	}
	return pending, after, nil
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

// audienceKey identifies what a caller may see (hitl.CanSee).
func audienceKey(c hitl.Caller) string {
	return string(c.Role) + "\x00" + c.Name + "\x00" + strings.Join(c.Groups, "\x00")
}

// Bounds of the replay cache.
const (
	replayCacheLists = 16   // callers whose lists are kept
	replayCacheItems = 1000 // longer lists are read each time
)

// replayCache keeps, for the newest event log position, the pending lists
// replays read there, by audience. The lists are shared and never changed.
type replayCache struct {
	mu    sync.Mutex
	seq   int64
	lists map[string][]*hitl.Interaction
}

// get returns the list read for key at seq, if any.
func (rc *replayCache) get(key string, seq int64) ([]*hitl.Interaction, bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.seq != seq {
		return nil, false
	}
	pending, ok := rc.lists[key]
	return pending, ok
}

// put keeps the list read for key at seq; lists of older positions are
// dropped.
func (rc *replayCache) put(key string, seq int64, pending []*hitl.Interaction) {
	if len(pending) > replayCacheItems {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	switch {
	case seq > rc.seq || rc.lists == nil:
		rc.seq, rc.lists = seq, make(map[string][]*hitl.Interaction)
	case seq < rc.seq || len(rc.lists) >= replayCacheLists:
		return
	}
	rc.lists[key] = pending
}
