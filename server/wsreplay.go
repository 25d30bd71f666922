package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/server/internal/wshub"
)

// replay sends c what it missed before going live, then hands c to the
// hub with the live events that arrived meanwhile: the logged events
// after the point it resumes from when it can (resumeWS), else every
// pending interaction it may see and asked for (replayPending).
func (s *Server) replay(ctx context.Context, c *wsClient) {
	if c.resume {
		done, err := s.resumeWS(ctx, c)
		if err != nil {
			s.log.Error("websocket: replay the event log", "after", c.after, "error", err)
			c.conn.Drop()
		}
		if done || err != nil {
			return
		}
	}
	if c.page != nil {
		s.replayPage(ctx, c)
		return
	}
	s.replayPending(ctx, c)
}

// replayPending writes every pending interaction c may see and asked for,
// oldest first, and hitl:replay_done with their ids and c.conn.Start():
// live events after it follow (those the list already shows are
// harmless, and a created event it already shows is skipped).
func (s *Server) replayPending(ctx context.Context, c *wsClient) {
	// A replayed interaction's created event is in the log up to upTo (it
	// was committed with the interaction), so the stream can only repeat
	// it until it passes upTo.
	list, upTo, err := s.replaySet(ctx, c.caller)
	if err != nil {
		s.log.Error("websocket: read the pending interactions to replay", "error", err)
		c.conn.Drop()
		return
	}
	rw := c.conn.Replay()
	var ids []string // the ids sent, when the filter leaves some out
	for _, in := range list.pending {
		if !c.filter.match(in) {
			continue
		}
		frame, err := s.hub.QuestionFrame(in)
		if err != nil {
			s.log.Error("websocket: encode a pending interaction", "interaction_id", in.ID, "error", err)
			c.conn.Drop()
			return
		}
		if !c.filter.all() {
			ids = append(ids, in.ID)
		}
		if !rw.Add(frame) {
			return
		}
	}
	pending := list.idsJSON()
	if !c.filter.all() {
		pending = idsJSON(ids)
	}
	if !finishReplay(rw, c.conn.Start(), false, pending) {
		return
	}
	c.conn.GoLive(list.ids, upTo, 0)
}

// finishReplay writes hitl:replay_done (see replayDone) after what rw
// has queued; false means the connection was dropped.
func finishReplay(rw *wshub.Replay, seq int64, resumed bool, pending []byte) bool {
	head, tail := replayDone(seq, resumed, pending)
	return rw.Finish(head, pending, tail)
}

// replayList is a list of pending interactions to replay, shared by every
// connection that replays it and never changed.
type replayList struct {
	pending []*hitl.Interaction // oldest first
	ids     map[string]bool     // the ids in pending

	idsOnce sync.Once
	idsData []byte // the ids as a JSON array, in order, made once
}

func newReplayList(pending []*hitl.Interaction) *replayList {
	l := &replayList{pending: pending, ids: make(map[string]bool, len(pending))}
	for _, in := range pending {
		l.ids[in.ID] = true
	}
	return l
}

// idsJSON returns the ids of the list, oldest first, as a JSON array.
func (l *replayList) idsJSON() []byte {
	l.idsOnce.Do(func() {
		ids := make([]string, len(l.pending))
		for i, in := range l.pending {
			ids[i] = in.ID
		}
		l.idsData = idsJSON(ids)
	})
	return l.idsData
}

// replaySet returns the pending interactions caller may see and the event
// log position they are complete up to. When nothing has been logged since
// the same audience's last replay, that replay's list is reused; otherwise
// connections of one audience that arrive together share one read (see
// replayReads): ten thousand inboxes reconnecting after a restart cost a
// read or two of the store, and memory for one list, not ten thousand.
func (s *Server) replaySet(ctx context.Context, caller hitl.Caller) (*replayList, int64, error) {
	key := audienceKey(caller)
	if list, at, err := s.keptReplay(ctx, key); list != nil || err != nil {
		return list, at, err
	}
	r := s.replayReads.read(key, func(r *replayRead) {
		// The connections that share it may go; the read goes on.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), replayReadTimeout)
		defer cancel()
		r.list, r.upTo, r.err = s.readReplay(ctx, caller)
	})
	return r.list, r.upTo, r.err
}

// keptReplay returns the event log position, and the list kept for the
// audience key if nothing was logged since it was read (else nil).
func (s *Server) keptReplay(ctx context.Context, key string) (*replayList, int64, error) {
	at, err := s.broker.LastEventSeq(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("read the event log position: %w", err)
	}
	list, _ := s.replays.get(key, at)
	return list, at, nil
}

// readReplay reads the pending interactions caller may see, and the
// position they are complete up to, unless the read before it kept that
// list; it keeps the list for reuse when nothing was logged while it read.
func (s *Server) readReplay(ctx context.Context, caller hitl.Caller) (*replayList, int64, error) {
	// Connections that waited for the read before this one may find its
	// list kept.
	key := audienceKey(caller)
	kept, before, err := s.keptReplay(ctx, key)
	if kept != nil || err != nil {
		return kept, before, err
	}
	// Every event up to before has reached this server, so none below it
	// is still committing (a shared store commits out of order).
	complete := s.broker.Delivered() >= before
	pending, err := s.pendingInteractions(hitl.WithCaller(ctx, caller)) // only what the caller may see
	if err != nil {
		return nil, 0, err
	}
	after, err := s.broker.LastEventSeq(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("read the event log position: %w", err)
	}
	list := newReplayList(pending)
	if complete && after == before {
		// Nothing happened while reading: the list is the state at before.
		s.replays.put(key, before, list)
	}
	return list, after, nil
}

// replayReadTimeout bounds a shared replay read.
const replayReadTimeout = 30 * time.Second

// replayReads runs the replay reads, one at a time per audience. A
// connection shares a read only if the read started after the connection
// asked for one: the read then sees every interaction created before the
// connection joined the hub, and the hub streams it every later one. One
// that arrives while a read runs waits for it to end and shares the next.
type replayReads struct {
	mu      sync.Mutex
	started int64                  // reads started so far
	running map[string]*replayRead // by audience
}

// replayRead is one read, shared by the connections waiting for it.
type replayRead struct {
	n    int64         // replayReads.started when it began
	done chan struct{} // closed when the fields below are set
	list *replayList
	upTo int64
	err  error
}

// read returns a read for key that started after this call: a running one
// that did, or one that fn makes.
func (rr *replayReads) read(key string, fn func(*replayRead)) *replayRead {
	rr.mu.Lock()
	arrived := rr.started
	for {
		r := rr.running[key]
		if r == nil {
			break
		}
		rr.mu.Unlock()
		<-r.done
		if r.n > arrived {
			return r
		}
		rr.mu.Lock()
	}
	rr.started++
	r := &replayRead{n: rr.started, done: make(chan struct{})}
	if rr.running == nil {
		rr.running = make(map[string]*replayRead)
	}
	rr.running[key] = r
	rr.mu.Unlock()

	fn(r)
	rr.mu.Lock()
	delete(rr.running, key)
	rr.mu.Unlock()
	close(r.done)
	return r
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
	replayCacheItems = 1000 // longer lists are read for each group of connections
)

// replayCache keeps, for the newest event log position, the pending lists
// replays read there, by audience. The lists are shared and never changed.
type replayCache struct {
	mu    sync.Mutex
	seq   int64
	lists map[string]*replayList
}

// get returns the list read for key at seq, if any.
func (rc *replayCache) get(key string, seq int64) (*replayList, bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.seq != seq {
		return nil, false
	}
	list, ok := rc.lists[key]
	return list, ok
}

// put keeps the list read for key at seq; lists of older positions are
// dropped.
func (rc *replayCache) put(key string, seq int64, list *replayList) {
	if len(list.pending) > replayCacheItems {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	switch {
	case seq > rc.seq || rc.lists == nil:
		rc.seq, rc.lists = seq, make(map[string]*replayList)
	case seq < rc.seq || len(rc.lists) >= replayCacheLists:
		return
	}
	rc.lists[key] = list
}
