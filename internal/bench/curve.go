package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// The cost curve: what a server costs as its table grows. One server is
// filled in steps (10,000, 100,000, 1,000,000 … up to the run's count) with
// pending questions, or with questions asked and answered (the history);
// at each step the same figures are read, so a figure that grows with the
// table where it need not shows as a slope: resident memory, the startup
// of a server that finds the rows, what a new inbox connection receives,
// the list's first and 100th page, an answer's unblock against the bare
// loop measured in the same run, and the database's size per interaction.
// The history's curve ends with the retention purge of all of it, timed,
// with answers measured while it runs.

// CurvePoint is the figures of one step of the cost curve. Times are in
// milliseconds unless named otherwise, memory in MiB; a figure that could
// not be read (memory of a server the benchmark did not start, the purge
// on a shared database) is left out.
type CurvePoint struct {
	Interactions int `json:"interactions"`
	// CreatesPerS is how fast this step's interactions were made (asked,
	// and for the history answered), 64 requests at a time.
	CreatesPerS float64 `json:"creates_per_s"`
	// RSSMiB is the memory of the server that made them, settled;
	// RSSRestartedMiB that of a server started on the same database.
	RSSMiB          *float64 `json:"rss_mib,omitempty"`
	RSSRestartedMiB *float64 `json:"rss_restarted_mib,omitempty"`
	// StartupS is from starting "hitl serve" on the database to its
	// /readyz answering 200 (migrations, overdue deadlines, caches).
	StartupS *float64 `json:"startup_s,omitempty"`
	// The inbox's first screen: a new WebSocket with the paged replay, from
	// dialling to its first message and to the end of the first page
	// (hitl:replay_done), medians and p99 of inboxSamples connections, and
	// the bytes of one first screen.
	InboxFirstByteMs      float64 `json:"inbox_first_byte_ms"`
	InboxFirstScreenMs    float64 `json:"inbox_first_screen_ms"`
	InboxFirstScreenP99Ms float64 `json:"inbox_first_screen_p99_ms"`
	InboxFirstScreenBytes int     `json:"inbox_first_screen_bytes"`
	// GET /api/v1/interactions, 50 a page: p99 of the first page and of
	// the 100th (ListDeepPage, when there are fewer pages).
	ListPage1P99Ms   float64 `json:"list_page_1_p99_ms"`
	ListPage100P99Ms float64 `json:"list_page_100_p99_ms"`
	ListDeepPage     int     `json:"list_deep_page"`
	// Answer → agent unblocked on this table, and as a ratio to the bare
	// loop's same percentile (SQLite runs).
	UnblockP50Ms      float64  `json:"unblock_p50_ms"`
	UnblockP99Ms      float64  `json:"unblock_p99_ms"`
	UnblockP50VsFloor *float64 `json:"unblock_p50_vs_floor,omitempty"`
	UnblockP99VsFloor *float64 `json:"unblock_p99_vs_floor,omitempty"`
	// The database's size (tables and indexes) and the event log's share,
	// per interaction in it.
	DBBytesPerInteraction     *float64 `json:"db_bytes_per_interaction,omitempty"`
	EventsBytesPerInteraction *float64 `json:"events_bytes_per_interaction,omitempty"`
}

// PurgeFigures is the retention purge of the history's curve: every
// answered interaction deleted by "hitl purge" while the server runs.
type PurgeFigures struct {
	Interactions int     `json:"interactions"`
	Seconds      float64 `json:"seconds"`
	// Answers made while the purge ran: how many, and their unblock p99.
	Answers      int     `json:"answers"`
	UnblockP99Ms float64 `json:"unblock_p99_ms"`
	LostWakeups  int     `json:"lost_wakeups"`
}

// CurveFigures are the cost curve's figures in the Result; the named keys
// repeat the 1,000,000 step's headline figures.
type CurveFigures struct {
	// PendingCurve and EndedCurve are keyed by the step's size.
	PendingCurve map[string]*CurvePoint `json:"pending_curve,omitempty"`
	EndedCurve   map[string]*CurvePoint `json:"ended_curve,omitempty"`
	Purge        *PurgeFigures          `json:"purge,omitempty"`

	RSS1MPending          *float64 `json:"rss_1m_pending_mib"`
	Startup1MPending      *float64 `json:"startup_1m_pending_s"`
	InboxFirstScreen1M    *float64 `json:"inbox_first_screen_1m_ms"`
	UnblockP50At1MPending *float64 `json:"unblock_p50_ms_1m_pending"`
	UnblockP99At1MPending *float64 `json:"unblock_p99_ms_1m_pending"`
}

// curveKind says which curve a phase fills: questions left pending, or
// asked and answered.
type curveKind struct {
	phase   string // the server's phase name
	answer  bool   // answer each question after asking it
	status  string // the list's ?status=
	sort    string // the list's ?sort=
	counted string // what the progress lines call the rows
}

var (
	pendingKind = curveKind{phase: "pending", status: "pending", sort: "deadline", counted: "pending"}
	endedKind   = curveKind{phase: "ended", answer: true, status: "answered", sort: "newest", counted: "answered"}
)

// curveSizes returns the steps up to n: 10,000, 100,000, 1,000,000 … below
// n, then n itself.
func curveSizes(n int) []int {
	var sizes []int
	for s := 10_000; s < n; s *= 10 {
		sizes = append(sizes, s)
	}
	return append(sizes, n)
}

// curveRun is one curve phase in progress: its server (restarted at each
// step), the requests' client, and what it made.
type curveRun struct {
	cfg      Config
	kind     curveKind
	srv      *Server
	api      *api
	progress func(string, ...any)
	made     []string // ids, for cleaning a shared database
}

// runCurve fills a server with kind's interactions step by step and
// measures each step.
func runCurve(ctx context.Context, cfg Config, res *Result, kind curveKind, n int, progress func(string, ...any)) (err error) {
	srv, err := cfg.Launch(ctx, kind.phase)
	if err != nil {
		return fmt.Errorf("%s: %w", kind.phase, err)
	}
	r := &curveRun{cfg: cfg, kind: kind, srv: srv, api: newAPI(srv, 64), progress: progress}
	defer func() { err = errors.Join(err, r.finish(ctx)) }()
	if srv.PID != 0 && kind == pendingKind {
		base, err := rssMiB(srv.PID)
		if err != nil {
			return err
		}
		res.PendingBaseRSS = ptr(round1(base))
	}
	curve := map[string]*CurvePoint{}
	if kind == pendingKind {
		res.PendingCurve = curve
	} else {
		res.EndedCurve = curve
	}
	for _, size := range curveSizes(n) {
		p, err := r.step(ctx, res, size)
		if err != nil {
			return err
		}
		curve[strconv.Itoa(size)] = p
		res.noteCurvePoint(kind, p)
	}
	if kind == endedKind && cfg.Purge != nil && !cfg.Shared {
		if res.Purge, err = r.purge(ctx, n); res.Purge != nil {
			res.LostWakeups += res.Purge.LostWakeups
		}
	}
	return err
}

// step grows the table to size and reads its figures.
func (r *curveRun) step(ctx context.Context, res *Result, size int) (*CurvePoint, error) {
	r.progress("%s: growing to %s %s interactions", r.kind.phase, count(size), r.kind.counted)
	rate, err := r.grow(ctx, size)
	if err != nil {
		return nil, err
	}
	p := &CurvePoint{Interactions: size, CreatesPerS: round1(rate)}
	if r.srv.PID != 0 {
		rss, err := settledRSS(r.srv, r.cfg.Settle)
		if err != nil {
			return nil, err
		}
		p.RSSMiB = ptr(round1(rss))
	}
	if err := r.restart(ctx, p); err != nil {
		return nil, err
	}
	if err := r.measure(ctx, res, p); err != nil {
		return nil, err
	}
	r.progress("%s: %s", r.kind.phase, p.summary())
	return p, nil
}

// grow asks (and for the history answers) questions until the server has
// made size of them in this phase, and returns how many a second it made.
func (r *curveRun) grow(ctx context.Context, size int) (float64, error) {
	from := len(r.made)
	r.made = append(r.made, make([]string, size-from)...)
	var (
		mu   sync.Mutex
		done int
	)
	start := time.Now()
	err := parallel(ctx, size-from, 64, func(i int) error {
		id, err := r.api.create(ctx, r.kind.phase, from+i)
		if err != nil {
			return err
		}
		r.made[from+i] = id
		if r.kind.answer {
			if err := r.api.respond(ctx, id); err != nil {
				return err
			}
		}
		mu.Lock()
		done++
		if step := max((size-from)/5, 1); done%step == 0 {
			r.progress("%s: %s/%s", r.kind.phase, count(from+done), count(size))
		}
		mu.Unlock()
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("%s: grow to %d: %w", r.kind.phase, size, err)
	}
	return float64(size-from) / time.Since(start).Seconds(), nil
}

// restart stops the server and starts another on the same database, timing
// its startup and reading its settled memory. A server the benchmark did
// not start is left as it is.
func (r *curveRun) restart(ctx context.Context, p *CurvePoint) error {
	if r.srv.Stop == nil {
		return nil
	}
	r.api.close()
	err := r.srv.Stop()
	r.srv = nil
	if err != nil {
		return fmt.Errorf("%s: stop server: %w", r.kind.phase, err)
	}
	if r.srv, err = r.cfg.Launch(ctx, r.kind.phase); err != nil {
		return fmt.Errorf("%s: restart: %w", r.kind.phase, err)
	}
	r.api = newAPI(r.srv, 64)
	if r.srv.Startup > 0 {
		p.StartupS = ptr(round3(r.srv.Startup.Seconds()))
	}
	if r.srv.PID != 0 {
		rss, err := settledRSS(r.srv, r.cfg.Settle)
		if err != nil {
			return err
		}
		p.RSSRestartedMiB = ptr(round1(rss))
	}
	return nil
}

// finish cancels what a shared database would keep pending and stops the
// server.
func (r *curveRun) finish(ctx context.Context) error {
	if r.srv == nil {
		return nil
	}
	if r.cfg.Shared && r.kind == pendingKind {
		r.progress("%s: cancelling the %s questions", r.kind.phase, count(len(r.made)))
		cancelAll(context.WithoutCancel(ctx), r.api, r.made)
	}
	r.api.close()
	if r.srv.Stop == nil {
		return nil
	}
	if err := r.srv.Stop(); err != nil {
		return fmt.Errorf("%s: stop server: %w", r.kind.phase, err)
	}
	return nil
}

// noteCurvePoint fills the headline figures a step stands for: the memory
// figure of the pending table (at 100,000, or the run's count when it is
// smaller), and the 1,000,000 keys.
func (res *Result) noteCurvePoint(kind curveKind, p *CurvePoint) {
	if kind != pendingKind {
		return
	}
	rss := p.RSSMiB
	if p.RSSRestartedMiB != nil && (rss == nil || *p.RSSRestartedMiB > *rss) {
		rss = p.RSSRestartedMiB
	}
	if res.PendingCount < 100_000 {
		res.PendingCount, res.PendingCreatesPerS, res.RSS100kPending = p.Interactions, p.CreatesPerS, rss
	}
	if p.Interactions == 1_000_000 {
		res.RSS1MPending, res.Startup1MPending = rss, p.StartupS
		res.InboxFirstScreen1M = ptr(p.InboxFirstScreenMs)
		res.UnblockP50At1MPending, res.UnblockP99At1MPending = ptr(p.UnblockP50Ms), ptr(p.UnblockP99Ms)
	}
}

// summary is a step's progress line.
func (p *CurvePoint) summary() string {
	s := fmt.Sprintf("%s: inbox first screen %.1f ms (%d B), list p99 page 1 %.1f ms, page %d %.1f ms, unblock p50 %.3f ms p99 %.3f ms",
		count(p.Interactions), p.InboxFirstScreenMs, p.InboxFirstScreenBytes, p.ListPage1P99Ms, p.ListDeepPage, p.ListPage100P99Ms, p.UnblockP50Ms, p.UnblockP99Ms)
	if p.RSSMiB != nil && p.RSSRestartedMiB != nil && p.StartupS != nil {
		s += fmt.Sprintf(", %.1f MiB resident (%.1f MiB after a restart that took %.3f s)", *p.RSSMiB, *p.RSSRestartedMiB, *p.StartupS)
	}
	if p.DBBytesPerInteraction != nil {
		s += fmt.Sprintf(", %.0f B of database per interaction", *p.DBBytesPerInteraction)
	}
	return s
}
