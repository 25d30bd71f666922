package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/hitl-sh/hitl"
)

// replayPaging is a connection's ?replay=page: instead of every pending
// question, the first page in the inbox's order, then hitl:replay_done
// with the page's ids, the cursor of the rest (fetched on demand through
// GET /api/v1/interactions) and the counts. Without it the replay is the
// AI-Parrot HITL contract's: every pending question.
type replayPaging struct {
	limit int
	sort  hitl.ListSort
}

// defaultReplayPage is the page size of ?replay=page without limit.
const defaultReplayPage = 50

// parseReplayPaging reads ?replay=page&limit=N&sort=deadline|newest (nil
// without replay=page). A paged replay cannot also be narrowed to
// sessions: the page would be cut after it was read.
func parseReplayPaging(r *http.Request, filter streamFilter) (*replayPaging, error) {
	q := r.URL.Query()
	switch q.Get("replay") {
	case "", "all":
		return nil, nil
	case "page":
	default:
		return nil, hitl.Errorf(hitl.EINVALID, "replay must be all or page")
	}
	if !filter.all() {
		return nil, hitl.Errorf(hitl.EINVALID, "replay=page cannot be combined with session_id")
	}
	p := &replayPaging{limit: defaultReplayPage, sort: hitl.SortDeadline}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > hitl.MaxListLimit {
			return nil, hitl.Errorf(hitl.EINVALID, "limit must be between 1 and %d", hitl.MaxListLimit)
		}
		p.limit = n
	}
	if v := q.Get("sort"); v != "" {
		p.sort = hitl.ListSort(v)
		if p.sort != hitl.SortNewest && p.sort != hitl.SortDeadline {
			return nil, hitl.Errorf(hitl.EINVALID, "sort must be newest or deadline")
		}
	}
	return p, nil
}

// pageDone is the hitl:replay_done that ends a paged replay: the contract's
// fields (seq, resumed false, pending: the page's ids), and paged true, the
// order, the cursor of the next page (null for none) and the counts of
// every pending question the caller may see.
type pageDone struct {
	Type       string                  `json:"type"`
	Seq        int64                   `json:"seq"`
	Resumed    bool                    `json:"resumed"`
	Paged      bool                    `json:"paged"`
	Sort       hitl.ListSort           `json:"sort"`
	Pending    []string                `json:"pending"`
	NextCursor *string                 `json:"next_cursor"`
	Counts     *hitl.InteractionCounts `json:"counts"`
}

// replayPage writes c the first page of pending questions in c's order
// and the hitl:replay_done of a paged replay, then hands c to the hub.
// Live events held meanwhile follow; the created events of the questions
// on the page are skipped until the stream passes the position the page
// was read at.
func (s *Server) replayPage(ctx context.Context, c *wsClient) {
	ctx = hitl.WithCaller(ctx, c.caller)
	f := hitl.ListFilter{Status: hitl.StatusPending, Limit: c.page.limit, Sort: c.page.sort}
	page, next, err := s.broker.List(ctx, f)
	var counts *hitl.InteractionCounts
	if err == nil {
		counts, err = s.broker.Counts(ctx, hitl.ListFilter{Status: hitl.StatusPending})
	}
	var upTo int64
	if err == nil {
		upTo, err = s.broker.LastEventSeq(ctx)
	}
	if err != nil {
		s.log.Error("websocket: read the first page of pending interactions", "error", err)
		c.conn.Drop()
		return
	}
	rw := c.conn.Replay()
	done := pageDone{Type: msgReplayDone, Seq: c.conn.Start(), Paged: true, Sort: c.page.sort, Pending: make([]string, 0, len(page)), Counts: counts}
	replayed := make(map[string]bool, len(page))
	for _, in := range page {
		frame, err := s.hub.QuestionFrame(in)
		if err != nil {
			s.log.Error("websocket: encode a pending interaction", "interaction_id", in.ID, "error", err)
			c.conn.Drop()
			return
		}
		done.Pending = append(done.Pending, in.ID)
		replayed[in.ID] = true
		if !rw.Add(frame) {
			return
		}
	}
	if next != "" {
		done.NextCursor = &next
	}
	body, err := json.Marshal(done)
	if err != nil {
		s.log.Error("websocket: encode the end of a paged replay", "error", err)
		c.conn.Drop()
		return
	}
	if !rw.Finish(body) {
		return
	}
	c.conn.GoLive(replayed, upTo, 0)
}
