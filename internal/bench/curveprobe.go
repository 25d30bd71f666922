package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"
)

// Samples of the cost curve's probes at each step.
const (
	inboxSamples = 20  // new inbox connections
	listSamples  = 200 // requests of each list page
	listPageSize = 50
	listDeepPage = 100
)

// measure reads a step's figures from the (restarted) server.
func (r *curveRun) measure(ctx context.Context, res *Result, p *CurvePoint) error {
	first, screen, size, err := inboxFirstScreen(ctx, r.srv, inboxSamples)
	if err != nil {
		return fmt.Errorf("%s: inbox first screen: %w", r.kind.phase, err)
	}
	p.InboxFirstByteMs, p.InboxFirstScreenMs, p.InboxFirstScreenP99Ms = ms(first.P50), ms(screen.P50), ms(screen.P99)
	p.InboxFirstScreenBytes = size

	page1, deep, deepPage, err := listPages(ctx, r.api, r.kind, listSamples)
	if err != nil {
		return fmt.Errorf("%s: list: %w", r.kind.phase, err)
	}
	p.ListPage1P99Ms, p.ListPage100P99Ms, p.ListDeepPage = ms(page1.P99), ms(deep.P99), deepPage

	d, lost, err := unblock(ctx, r.srv, r.cfg.Samples, func(string, ...any) {})
	res.LostWakeups += lost
	if err != nil {
		return fmt.Errorf("%s: %w", r.kind.phase, err)
	}
	p.UnblockP50Ms, p.UnblockP99Ms = ms(d.P50), ms(d.P99)
	if res.FloorLoop != nil && *res.FloorLoop > 0 {
		p.UnblockP50VsFloor = ptr(round3(p.UnblockP50Ms / *res.FloorLoop))
		p.UnblockP99VsFloor = ptr(round3(p.UnblockP99Ms / *res.FloorLoopP99))
	}

	if r.cfg.Database != nil {
		sz, err := databaseSize(ctx, r.cfg.Database(r.kind.phase))
		if err != nil {
			return fmt.Errorf("%s: database size: %w", r.kind.phase, err)
		}
		// The unblock samples (and their warm-up) are in the table too.
		n := float64(p.Interactions + r.cfg.Samples + max(r.cfg.Samples/10, 5))
		p.DBBytesPerInteraction = ptr(round1(float64(sz.Total) / n))
		p.EventsBytesPerInteraction = ptr(round1(float64(sz.Events) / n))
	}
	return nil
}

// inboxFirstScreen opens n new inbox connections one after the other — a
// WebSocket with the paged replay, as the web inbox opens — and returns the
// time from dialling to the first message and to the end of the first page
// (hitl:replay_done), and the bytes of the last first screen.
func inboxFirstScreen(ctx context.Context, srv *Server, n int) (first, screen dist, size int, err error) {
	firsts, screens := make([]time.Duration, 0, n), make([]time.Duration, 0, n)
	for range n {
		f, s, b, err := oneFirstScreen(ctx, srv)
		if err != nil {
			return dist{}, dist{}, 0, err
		}
		firsts, screens, size = append(firsts, f), append(screens, s), b
	}
	return summarize(firsts), summarize(screens), size, nil
}

// replayDone marks the message that ends a replay.
var replayDone = []byte(`"hitl:replay_done"`)

// oneFirstScreen times one new inbox connection's first screen.
func oneFirstScreen(ctx context.Context, srv *Server) (first, screen time.Duration, size int, err error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	t0 := time.Now()
	ws, err := dialWSPath(ctx, srv, "/ws?replay=page", nil)
	if err != nil {
		return 0, 0, 0, err
	}
	defer ws.Close()
	if d, ok := ctx.Deadline(); ok {
		_ = ws.c.SetReadDeadline(d)
	}
	for {
		payload, err := ws.next()
		if err != nil {
			return 0, 0, 0, fmt.Errorf("read the first screen: %w", err)
		}
		if first == 0 {
			first = time.Since(t0)
		}
		size += len(payload)
		if bytes.Contains(payload, replayDone) {
			return first, time.Since(t0), size, nil
		}
	}
}

// listPages times GET /api/v1/interactions of kind's rows, listPageSize a
// page in the inbox's (or History's) order: the first page, and the 100th
// reached by following the cursors (or the last, when there are fewer; its
// number is returned), each requested n times.
func listPages(ctx context.Context, a *api, kind curveKind, n int) (page1, deep dist, deepPage int, err error) {
	base := fmt.Sprintf("/api/v1/interactions?status=%s&sort=%s&limit=%d", kind.status, kind.sort, listPageSize)
	deepPath, deepPage := base, 1
	for deepPage < listDeepPage {
		_, cursor, err := listOnce(ctx, a, deepPath)
		if err != nil {
			return dist{}, dist{}, 0, err
		}
		if cursor == "" {
			break
		}
		deepPath, deepPage = base+"&cursor="+url.QueryEscape(cursor), deepPage+1
	}
	timed := func(path string) (dist, error) {
		samples := make([]time.Duration, 0, n)
		for range n {
			d, _, err := listOnce(ctx, a, path)
			if err != nil {
				return dist{}, err
			}
			samples = append(samples, d)
		}
		return summarize(samples), nil
	}
	if page1, err = timed(base); err != nil {
		return dist{}, dist{}, 0, err
	}
	if deep, err = timed(deepPath); err != nil {
		return dist{}, dist{}, 0, err
	}
	return page1, deep, deepPage, nil
}

// listOnce requests one list page and returns how long it took and the
// next page's cursor.
func listOnce(ctx context.Context, a *api, path string) (time.Duration, string, error) {
	t0 := time.Now()
	status, data, err := a.roundTrip(ctx, "GET", path, nil)
	took := time.Since(t0)
	if err != nil {
		return 0, "", fmt.Errorf("GET %s: %w", path, err)
	}
	if status != 200 {
		return 0, "", &statusError{"GET", path, status, string(bytes.TrimSpace(data))}
	}
	var page struct {
		NextCursor string `json:"next_cursor"`
	}
	if err := json.Unmarshal(data, &page); err != nil {
		return 0, "", fmt.Errorf("GET %s: decode response: %w", path, err)
	}
	return took, page.NextCursor, nil
}
