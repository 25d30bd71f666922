package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable writes the hooks phase's figures as a table.
func (r *HooksResult) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "What an agent pays per tool call (%s store, %d samples, other CPU %.1f s, load %.2f)\n\n", r.Store, r.Samples, r.OtherCPU, r.Load)
	fmt.Fprintf(tw, "start (hitl hook with nothing to do)\t%.2f ms\t\t%.2f ms\t\t%.2f×\n", r.StartP50, r.FloorStartP50, safeRatio(r.StartP50, r.FloorStartP50))
	fmt.Fprintln(tw, "command hook\trule p50\trule p99\tfloor p50\tfloor p99\t÷ floor p50\tto a person: question → person p50\tanswer → hook exits p50")
	for _, d := range HookDialects() {
		f, ok := r.Hooks[d]
		if !ok {
			continue
		}
		fmt.Fprintf(tw, "hitl hook %s\t%.2f ms\t%.2f ms\t%.2f ms\t%.2f ms\t%.2f×\t%s\t%s\n", d, f.RuleP50, f.RuleP99, f.FloorP50, f.FloorP99, f.RuleVsFloorP50, optMS(f.PersonNotifyP50), optMS(f.PersonUnblockP50))
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "http hook\tp50\tp99\tfloor p50\tfloor p99\t÷ floor p50")
	fmt.Fprintf(tw, "POST %s (a rule allows)\t%.3f ms\t%.3f ms\t%.3f ms\t%.3f ms\t%.2f×\n", claudeHookPath, r.HTTPHookRuleP50, r.HTTPHookRuleP99, r.HTTPHookFloorP50, r.HTTPHookFloorP99, r.HTTPHookVsFloorP50)
	fmt.Fprintf(tw, "floor + a durable commit per call\t\t\t%.3f ms\t\t%.2f×\n", r.HTTPHookCommitFloorP50, r.HTTPHookVsCommitFloorP50)
	fmt.Fprintf(tw, "floor + hitl's record of the call, committed\t\t\t%.3f ms\t\t%.2f×\n", r.HTTPHookRowsFloorP50, r.HTTPHookVsRowsFloorP50)
	if r.Rules10kVs10P50 != nil {
		var parts []string
		for _, n := range []string{"10", maxKey(r.RulesP50)} {
			parts = append(parts, fmt.Sprintf("%s rules %.3f ms", n, r.RulesP50[n]))
		}
		fmt.Fprintf(tw, "rules in force (http hook p50)\t%s\t%.2f×\n", strings.Join(parts, ", "), *r.Rules10kVs10P50)
	}
	return tw.Flush()
}

// safeRatio returns a over b, 0 when b is 0.
func safeRatio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// optMS formats an optional figure in milliseconds.
func optMS(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%.1f ms", *v)
}

// maxKey returns the key of m other than "10" (the larger rule set).
func maxKey(m map[string]float64) string {
	for k := range m {
		if k != "10" {
			return k
		}
	}
	return "10"
}
