package bench

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// writeReplicas writes the replicas' figures: one column a number of
// replicas.
func (r *Result) writeReplicas(w io.Writer) error {
	if len(r.Replicas) == 0 {
		return nil
	}
	var figs []*ReplicaFigures
	for _, f := range r.Replicas {
		figs = append(figs, f)
	}
	slices.SortFunc(figs, func(a, b *ReplicaFigures) int { return a.Replicas - b.Replicas })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"\nreplicas on one PostgreSQL (sharing this machine's cores)"}
	for _, f := range figs {
		head = append(head, strconv.Itoa(f.Replicas))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	rows := []struct {
		name string
		cell func(f *ReplicaFigures) string
	}{
		{"answer → unblocked across replicas, p50 / p99", func(f *ReplicaFigures) string {
			return num(f.UnblockP50Ms) + " / " + num(f.UnblockP99Ms) + " ms"
		}},
		{fmt.Sprintf("round trips/s, %d agents", replicaAgents), func(f *ReplicaFigures) string { return num(f.RoundTrips) + "/s" }},
		{"  answer → unblocked under that load, p99", func(f *ReplicaFigures) string { return num(f.LoadUnblockP99Ms) + " ms" }},
		{"  CPU per round trip: replicas / PostgreSQL", func(f *ReplicaFigures) string {
			db := "–"
			if f.DatabaseCPUPerRoundTrip != nil {
				db = num(*f.DatabaseCPUPerRoundTrip)
			}
			return num(f.ServerCPUPerRoundTrip) + " / " + db + " µs"
		}},
		{"fan-out to the WebSockets of all replicas: 99% / all", func(f *ReplicaFigures) string {
			if f.FanoutP99Ms == nil {
				return "–"
			}
			return fmt.Sprintf("%s / %s ms (%s)", num(*f.FanoutP99Ms), num(*f.FanoutAllMs), count(f.Subscribers))
		}},
		{"lost wake-ups", func(f *ReplicaFigures) string { return strconv.Itoa(f.LostWakeups) }},
	}
	for _, row := range rows {
		cells := []string{"  " + row.name}
		for _, f := range figs {
			cells = append(cells, row.cell(f))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}
