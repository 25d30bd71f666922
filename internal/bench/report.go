package bench

import (
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
)

// target is a goal stated for a figure: at most (or at least) a value.
type target struct {
	limit  float64
	atMost bool
}

func (t target) String() string {
	if t.limit == 0 {
		return ""
	}
	if t.atMost {
		return "≤ " + num(t.limit)
	}
	return "≥ " + num(t.limit)
}

// met reports whether v meets the target.
func (t target) met(v float64) string {
	switch {
	case t.limit == 0:
		return ""
	case t.atMost && v <= t.limit, !t.atMost && v >= t.limit:
		return "met"
	}
	return "MISSED"
}

// targetText shows t, as a ratio to the bare loop when ratio says so.
func targetText(t target, ratio bool) string {
	if ratio {
		return t.String() + "× loop"
	}
	return t.String()
}

// againstLoop reports whether the round-trip figure at concurrency c is judged
// against the bare loop (it was measured, and c is not 1).
func againstLoop(r *Result, c string) bool { return r.RoundTripsVsFloor[c] > 0 && c != "1" }

// answerFloor is the floor of the latency figures: one loopback round
// trip and one durable commit.
func (r *Result) answerFloor() float64 {
	f := r.FloorHTTP
	if r.FloorCommit != nil {
		f += *r.FloorCommit
	}
	return f
}

// serialRate is the floor's round trips per second without batching: two
// durable commits (create, answer) one after the other.
func (r *Result) serialRate() float64 {
	if r.FloorCommit == nil || *r.FloorCommit == 0 {
		return 0
	}
	return 1000 / (2 * *r.FloorCommit)
}

// WriteTable writes the figures as a readable table.
func (r *Result) WriteTable(w io.Writer) error {
	tw := &table{tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	mode := "full run"
	if r.Quick {
		mode = "quick run"
	}
	auth := "local mode (no credentials)"
	if r.Auth {
		auth = "authentication on (an API token on every request)"
	}
	fmt.Fprintf(tw, "hitl bench (%s): store %s, %s, %d CPUs, load average %.2f at start, %.0f s, other processes used %.1f CPU-seconds meanwhile\n\n",
		mode, r.Store, auth, runtime.NumCPU(), r.LoadAvgStart, r.DurationSeconds, r.OtherCPUSeconds)

	r.writeFloors(tw)
	fmt.Fprintln(tw, "figure\tmeasured\ttarget\t\tvs floor")
	r.writeLatencies(tw)
	r.writeThroughput(tw)
	r.writeMemory(tw)
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := r.writeCurves(w); err != nil {
		return err
	}
	return r.writeReplicas(w)
}

// table is the report's tabwriter.
type table struct{ *tabwriter.Writer }

// latVs writes a latency figure with its ratio to floor, the bare loop's
// same figure, or when there is none to the answer floor.
func (tw *table) latVs(r *Result, name string, p *float64, t target, floor *float64) {
	if p == nil {
		return
	}
	v := *p
	ratio := ""
	switch f := r.answerFloor(); {
	case floor != nil && *floor > 0 && v > 0:
		ratio = fmt.Sprintf("%.2f× bare loop", v / *floor)
	case f > 0 && v > 0:
		ratio = fmt.Sprintf("%.1f× floor", v/f)
	}
	fmt.Fprintf(tw, "  %s\t%s ms\t%s\t%s\t%s\n", name, num(v), t, t.met(v), ratio)
}

// lat writes a latency figure with its ratio to the answer floor.
func (tw *table) lat(r *Result, name string, p *float64, t target) { tw.latVs(r, name, p, t, nil) }

// writeFloors writes the floors measured in the same run.
func (r *Result) writeFloors(tw *table) {
	fmt.Fprintln(tw, "floor (same run, same machine)\tp50\tp99\t")
	fmt.Fprintf(tw, "  loopback HTTP round trip\t%s ms\t%s ms\t\n", num(r.FloorHTTP), num(r.FloorHTTPP99))
	if r.FloorCommit != nil {
		what := "durable SQLite commit (WAL, synchronous=FULL)"
		if r.FloorCommitStore == "postgres" {
			what = "durable PostgreSQL commit"
		}
		fmt.Fprintf(tw, "  %s\t%s ms\t%s ms\t\n", what, num(*r.FloorCommit), num(*r.FloorCommitP99))
	}
	if r.FloorCommitIdle != nil {
		fmt.Fprintf(tw, "  the same commit after %s idle\t%s ms\t%s ms\t\n", settle, num(*r.FloorCommitIdle), num(*r.FloorCommitIdleP99))
	}
	fmt.Fprintf(tw, "  answer floor = round trip + commit\t%s ms\t\t\n", num(r.answerFloor()))
	if r.FloorLoop != nil {
		what := "bare answer loop (commit, wake a held long-poll)"
		if r.FloorCommitStore == "postgres" {
			what = "bare answer loop on PostgreSQL (compare-and-set, NOTIFY wakes a held long-poll)"
		}
		fmt.Fprintf(tw, "  %s\t%s ms\t%s ms\t\n", what, num(*r.FloorLoop), num(*r.FloorLoopP99))
	}
	if s := r.serialRate(); s > 0 {
		fmt.Fprintf(tw, "  serial round trips/s = 1 / (2 commits)\t%s/s\t\t\n", num(s))
	}
	fmt.Fprintln(tw, "\t\t\t")

}

// writeLatencies writes the latency figures.
func (r *Result) writeLatencies(tw *table) {
	tw.latVs(r, "answer → agent unblocked, p50", r.UnblockP50, target{0.5, true}, r.FloorLoop)
	tw.lat(r, "answer → agent unblocked, p95", r.UnblockP95, target{})
	tw.latVs(r, "answer → agent unblocked, p99", r.UnblockP99, target{2, true}, r.FloorLoopP99)
	tw.lat(r, "answer → agent unblocked, p99, 16 agents", r.UnblockP99C16, target{5, true})
	if v, ok := r.UnblockP99ByConcurrency["256"]; ok {
		tw.lat(r, "answer → agent unblocked, p99, 256 agents", &v, target{})
	}
	tw.lat(r, "question → WebSocket, p50", r.NotifyP50, target{})
	tw.lat(r, "question → WebSocket, p99", r.NotifyP99, target{5, true})
}

// writeThroughput writes round trips per second and lost wake-ups.
func (r *Result) writeThroughput(tw *table) {
	for _, c := range []string{"1", "16", "256"} {
		v, ok := r.RoundTrips[c]
		if !ok {
			continue
		}
		t := target{}
		switch c {
		case "16":
			t = target{3000, false}
		case "256":
			t = target{5000, false}
		}
		ratio := ""
		if s := r.serialRate(); s > 0 {
			ratio = fmt.Sprintf("%.1f× serial", v/s)
		}
		met := t.met(v)
		if f := r.RoundTripsVsFloor[c]; f > 0 {
			ratio = fmt.Sprintf("%.2f× bare loop", f)
			if c != "1" {
				// The stated target is a ratio to the loop measured in
				// the same run; absolute rates move with the host.
				rt := target{0.6, false}
				t, met = rt, rt.met(f)
			}
		}
		fmt.Fprintf(tw, "  round trips/s, %s agent(s)\t%s/s\t%s\t%s\t%s\n", c, num(v), targetText(t, againstLoop(r, c)), met, ratio)
		if f, ok := r.FloorRoundTrips[c]; ok {
			fmt.Fprintf(tw, "    bare loop, %s agent(s); CPU per round trip: loop %s µs, hitl %s + driver %s µs\t%s/s\t\t\t\n",
				c, num(r.FloorCPUPerRoundTrip[c]), num(r.ServerCPUPerRoundTrip[c]), num(r.DriverCPUPerRoundTrip[c]), num(f))
		}
		if f, ok := r.FloorDurableCreateRoundTrips[c]; ok {
			fmt.Fprintf(tw, "    bare loop committing each question too, %s agent(s) (hitl %.2f× it); CPU per round trip %s µs\t%s/s\t\t\t\n",
				c, r.RoundTripsVsFloorDurableCreate[c], num(r.FloorDurableCreateCPUPerRoundTrip[c]), num(f))
		}
		if f, ok := r.PGFloorRoundTrips[c]; ok {
			db := ""
			if d, ok := r.PGFloorDatabaseCPUPerRoundTrip[c]; ok {
				db = fmt.Sprintf("; PostgreSQL CPU per round trip: floor %s µs, hitl %s µs (%.2f×)", num(d), num(r.DatabaseCPUPerRoundTrip[c]), r.DatabaseCPUVsPGFloor[c])
			}
			fmt.Fprintf(tw, "    PostgreSQL floor (insert, compare-and-set, NOTIFY; pushed), %s agent(s) (hitl %.2f× it%s)%s\t%s/s\t\t\t\n",
				c, r.RoundTripsVsPGFloor[c], byRound(r.RoundTripsVsPGFloorRounds[c]), db, num(f))
		}
		if f, ok := r.PGRowsFloorRoundTrips[c]; ok {
			db := ""
			if d, ok := r.PGRowsFloorDatabaseCPUPerRoundTrip[c]; ok {
				db = fmt.Sprintf("; PostgreSQL CPU per round trip %s µs (hitl %.2f× it)", num(d), r.DatabaseCPUVsPGRowsFloor[c])
			}
			fmt.Fprintf(tw, "    … writing hitl's rows (its schema, row, events), %s agent(s) (hitl %.2f× it)%s\t%s/s\t\t\t\n",
				c, r.RoundTripsVsPGRowsFloor[c], db, num(f))
		}
		if f, ok := r.FloorPushedRoundTrips[c]; ok {
			fmt.Fprintf(tw, "    … and pushing each question to the person's WebSocket, %s agent(s) (hitl %.2f× it%s); CPU per round trip %s µs\t%s/s\t\t\t\n",
				c, r.RoundTripsVsFloorPushed[c], byRound(r.RoundTripsVsFloorPushedRounds[c]), num(r.FloorPushedCPUPerRoundTrip[c]), num(f))
		}
		if f, ok := r.FloorRowsRoundTrips[c]; ok {
			fmt.Fprintf(tw, "    … and writing hitl's rows (its schema, row and events), %s agent(s) (hitl %.2f× it); CPU per round trip %s µs\t%s/s\t\t\t\n",
				c, r.RoundTripsVsFloorRows[c], num(r.FloorRowsCPUPerRoundTrip[c]), num(f))
		}
	}
	if len(r.RoundTrips) > 0 || r.FanoutP99 != nil || r.LostWakeups > 0 {
		fmt.Fprintf(tw, "  lost wake-ups (all load runs)\t%d\t= 0\t%s\t\n", r.LostWakeups, map[bool]string{true: "met", false: "MISSED"}[r.LostWakeups == 0])
	}
}

// byRound says hitl's ratio to a floor in each round, when there were
// more than one: "; by round 0.49, 0.52, 0.51".
func byRound(ratios []float64) string {
	if len(ratios) < 2 {
		return ""
	}
	parts := make([]string, len(ratios))
	for i, x := range ratios {
		parts[i] = strconv.FormatFloat(x, 'f', 2, 64)
	}
	return "; by round " + strings.Join(parts, ", ")
}

// writeMemory writes resident memory and the fan-out to many WebSockets.
func (r *Result) writeMemory(tw *table) {
	if r.RSS100kPending != nil {
		name := fmt.Sprintf("resident memory, %s pending", count(r.PendingCount))
		t := target{300, true}
		if r.PendingCount != 100_000 {
			t = target{}
		}
		fmt.Fprintf(tw, "  %s\t%s MiB\t%s\t%s\t\n", name, num(*r.RSS100kPending), t, t.met(*r.RSS100kPending))
	}
	if r.RSSWaitersSubscribers != nil {
		t := target{512, true}
		fmt.Fprintf(tw, "  resident memory, 10,000 long-polls + 10,000 WebSockets\t%s MiB\t%s\t%s\t\n", num(*r.RSSWaitersSubscribers), t, t.met(*r.RSSWaitersSubscribers))
		if r.RSSStreamsExtrapolated {
			fmt.Fprintf(tw, "    measured with %s + %s\t%s MiB\t\t\t\n", count(r.Waiters), count(r.Subscribers), num(*r.RSSStreamsMeasured))
		}
		if r.KiBPerWait != nil {
			fmt.Fprintf(tw, "    per long-poll / per WebSocket\t%s / %s KiB\t≤ 25 per wait\t%s\t\n", num(*r.KiBPerWait), num(*r.KiBPerSubscriber), target{25, true}.met(*r.KiBPerWait))
		}
	}
	if r.FanoutP99 != nil {
		t := target{}
		if r.Subscribers >= streamsTarget {
			t = target{100, true}
		}
		tw.lat(r, fmt.Sprintf("question → %s WebSockets, 99%% reached", count(r.Subscribers)), r.FanoutP99, target{})
		tw.lat(r, fmt.Sprintf("question → %s WebSockets, all reached", count(r.Subscribers)), r.FanoutAll, t)
	}
}

// num formats a figure with three significant decimals at most.
func num(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// count formats n with thousands separators.
func count(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
