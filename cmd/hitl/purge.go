package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hitl-sh/hitl/broker"
)

// defaultRetention is how long hitl serve keeps ended interactions.
const defaultRetention = "90d"

// maxAge bounds an age or retention: a hundred years.
const maxAge = 100 * 365 * 24 * time.Hour

// parseAge reads an age or retention for the flag name: a number of days
// ("90d", "1.5d"), a Go duration ("36h", "90m"), or both ("1d12h"); "0"
// is zero. Negative ages are refused.
func parseAge(name, s string) (time.Duration, error) {
	bad := fmt.Errorf("%s must be a number of days such as 90d, or a duration such as 36h; got %q", name, s)
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	var days time.Duration
	if head, rest, ok := strings.Cut(s, "d"); ok {
		n, err := strconv.ParseFloat(head, 64)
		if err != nil || n < 0 || math.IsInf(n, 0) || math.IsNaN(n) || n*24 > maxAge.Hours() {
			return 0, bad
		}
		days, s = time.Duration(n*float64(24*time.Hour)), rest
		if s == "" {
			return days, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > maxAge-days {
		return 0, bad
	}
	return days + d, nil
}

// runPurge deletes, or counts with --dry-run, what ended more than
// --older-than ago. Exit codes: 0 done, 1 failed, 2 bad flags.
func runPurge(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("purge", "hitl purge --older-than AGE [--dry-run] [--db DB]",
		"Deletes the interactions that ended (answered, expired or cancelled) more\n"+
			"than AGE ago, with their events and Slack rows, as hitl serve --retention\n"+
			"does every hour, and prints what went. Pending interactions are never\n"+
			"touched. It works on the database directly, with the server running or\n"+
			"not, in short batches that take turns with the server's writes. AGE is a\n"+
			"number of days (30d) or a duration (36h).", stderr)
	olderThan := fs.String("older-than", "", "delete what ended more than `age` ago, such as 30d or 36h (required)")
	dry := fs.Bool("dry-run", false, "print what would be deleted, and delete nothing")
	batch := fs.Int("batch", 0, "interactions deleted per transaction (default 100, at most 1000)")
	db := dbFlag(fs)
	if code, ok := parse(fs, args, 2); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hitl purge: unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return 2
	}
	age, err := parseAge("--older-than", *olderThan)
	switch {
	case *olderThan == "":
		err = fmt.Errorf("--older-than is required, such as --older-than 30d")
	case err == nil && age == 0:
		err = fmt.Errorf("--older-than must be more than 0")
	case *batch < 0:
		err = fmt.Errorf("--batch must be positive")
	}
	if err != nil {
		fmt.Fprintf(stderr, "hitl purge: %v\n", err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	store, err := openStore(ctx, log, *db, false)
	if err != nil {
		fmt.Fprintf(stderr, "hitl purge: open database %s: %v\n", redactDB(*db), err)
		return 1
	}
	defer store.Close()
	before := time.Now().Add(-age)
	total, err := broker.Purge(ctx, store, before, &broker.PurgeOptions{DryRun: *dry, Batch: *batch})
	verb := "removed"
	if *dry {
		verb = "would remove"
	}
	fmt.Fprintln(stdout, purgeSummary(verb, before, total))
	if err != nil {
		fmt.Fprintf(stderr, "hitl purge: %v\n", err)
		return 1
	}
	return 0
}

// purgeSummary is the line hitl purge prints: "removed 12 interactions
// that ended before …, with 36 events, 0 slack_actions, 0 slack_messages".
func purgeSummary(verb string, before time.Time, total *broker.PurgeTotal) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %d interactions that ended before %s", verb, total.Interactions(), before.UTC().Format(time.RFC3339))
	sep := ", with "
	for _, table := range slices.Sorted(maps.Keys(total.Rows)) {
		if table == "interactions" {
			continue
		}
		fmt.Fprintf(&b, "%s%d %s", sep, total.Rows[table], table)
		sep = ", "
	}
	return b.String()
}
