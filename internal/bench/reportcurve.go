package bench

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// writeCurves writes the cost curves: one column a step, one row a figure,
// with the targets stated for them.
func (r *Result) writeCurves(w io.Writer) error {
	for _, c := range []struct {
		name  string
		curve map[string]*CurvePoint
	}{{"pending", r.PendingCurve}, {"answered (history)", r.EndedCurve}} {
		if len(c.curve) == 0 {
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		points := sortedPoints(c.curve)
		head := []string{"\ncost curve, " + c.name}
		for _, p := range points {
			head = append(head, count(p.Interactions))
		}
		fmt.Fprintln(tw, strings.Join(append(head, "target", ""), "\t"))
		for _, row := range curveRows(c.name == "pending") {
			cells := []string{"  " + row.name}
			for _, p := range points {
				cells = append(cells, row.cell(p))
			}
			fmt.Fprintln(tw, strings.Join(append(cells, row.target, row.met(points)), "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if p := r.Purge; p != nil {
		fmt.Fprintf(w, "retention purge of %s answered interactions: %.1f s while %d answers were made (unblock p99 %s ms, %d lost wake-ups)\n",
			count(p.Interactions), p.Seconds, p.Answers, num(p.UnblockP99Ms), p.LostWakeups)
	}
	return nil
}

// sortedPoints returns a curve's steps, smallest first.
func sortedPoints(curve map[string]*CurvePoint) []*CurvePoint {
	var points []*CurvePoint
	for _, p := range curve {
		points = append(points, p)
	}
	slices.SortFunc(points, func(a, b *CurvePoint) int { return a.Interactions - b.Interactions })
	return points
}

// curveRow is one figure of a cost curve: its cell at a step, its target
// and whether the steps it is stated for meet it.
type curveRow struct {
	name, target string
	cell         func(p *CurvePoint) string
	met          func(points []*CurvePoint) string
}

// curveRows are the rows of a curve; the pending curve carries targets.
func curveRows(pending bool) []curveRow {
	none := func([]*CurvePoint) string { return "" }
	opt := func(v *float64, unit string) string {
		if v == nil {
			return "–"
		}
		return num(*v) + unit
	}
	ratio := func(v float64, r *float64) string {
		if r == nil {
			return num(v) + " ms"
		}
		return fmt.Sprintf("%s ms (%.2f×)", num(v), *r)
	}
	rows := []curveRow{
		{"made per second", "", func(p *CurvePoint) string { return num(p.CreatesPerS) }, none},
		{"resident memory (made / restarted)", "", func(p *CurvePoint) string {
			return opt(p.RSSMiB, "") + " / " + opt(p.RSSRestartedMiB, " MiB")
		}, none},
		{"startup of a server that finds them", "", func(p *CurvePoint) string { return opt(p.StartupS, " s") }, none},
		{"new inbox: first byte / first screen, p50", "", func(p *CurvePoint) string {
			return num(p.InboxFirstByteMs) + " / " + num(p.InboxFirstScreenMs) + " ms"
		}, none},
		{"new inbox: first screen p99, size", "", func(p *CurvePoint) string {
			return fmt.Sprintf("%s ms, %s KiB", num(p.InboxFirstScreenP99Ms), num(float64(p.InboxFirstScreenBytes)/1024))
		}, none},
		{"list p99: page 1 / page 100", "", func(p *CurvePoint) string {
			return num(p.ListPage1P99Ms) + " / " + num(p.ListPage100P99Ms) + " ms" + map[bool]string{true: "", false: " (page " + strconv.Itoa(p.ListDeepPage) + ")"}[p.ListDeepPage == listDeepPage]
		}, none},
		{"answer → unblocked, p50 (× loop)", "", func(p *CurvePoint) string { return ratio(p.UnblockP50Ms, p.UnblockP50VsFloor) }, none},
		{"answer → unblocked, p99 (× loop)", "", func(p *CurvePoint) string { return ratio(p.UnblockP99Ms, p.UnblockP99VsFloor) }, none},
		{"database per interaction (event log)", "", func(p *CurvePoint) string {
			return opt(p.DBBytesPerInteraction, "") + " (" + opt(p.EventsBytesPerInteraction, ") B")
		}, none},
	}
	if !pending {
		return rows
	}
	at := func(size int, v func(p *CurvePoint) *float64, limit float64) func([]*CurvePoint) string {
		return func(points []*CurvePoint) string {
			for _, p := range points {
				if p.Interactions == size && v(p) != nil {
					return target{limit, true}.met(*v(p))
				}
			}
			return ""
		}
	}
	every := func(v func(p *CurvePoint) *float64, limit float64) func([]*CurvePoint) string {
		return func(points []*CurvePoint) string {
			met := ""
			for _, p := range points {
				if v(p) != nil {
					if met = (target{limit, true}).met(*v(p)); met == "MISSED" {
						return met
					}
				}
			}
			return met
		}
	}
	worst := func(p *CurvePoint) *float64 {
		return maxPtr(p.RSSMiB, p.RSSRestartedMiB)
	}
	rows[1].target, rows[1].met = "≤ 300 MiB at 100,000, ≤ 1 GiB at 1,000,000", func(points []*CurvePoint) string {
		if m := at(100_000, worst, 300)(points); m == "MISSED" {
			return m
		}
		return at(1_000_000, worst, 1024)(points)
	}
	rows[2].target, rows[2].met = "≤ 10 s at 1,000,000", at(1_000_000, func(p *CurvePoint) *float64 { return p.StartupS }, 10)
	rows[3].target, rows[3].met = "first screen ≤ 250 ms at 1,000,000", at(1_000_000, func(p *CurvePoint) *float64 { return &p.InboxFirstScreenMs }, 250)
	rows[6].target, rows[6].met = "≤ 1.15× loop at every size", every(func(p *CurvePoint) *float64 { return p.UnblockP50VsFloor }, 1.15)
	rows[7].target, rows[7].met = "≤ 1.5× loop at every size", every(func(p *CurvePoint) *float64 { return p.UnblockP99VsFloor }, 1.5)
	return rows
}

// maxPtr returns the larger of two optional figures.
func maxPtr(a, b *float64) *float64 {
	switch {
	case a == nil:
		return b
	case b == nil || *a >= *b:
		return a
	}
	return b
}
