package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/hitl-sh/hitl"
)

// questionWidth is how many characters of a question hitl ls shows.
const questionWidth = 60

// runList lists interactions as a table, or as JSON.
func runList(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("ls", "hitl ls [flags]",
		"Lists interactions, newest first: pending ones unless --status says otherwise.", stderr)
	status := fs.String("status", "pending", "`status` to list: pending, answered, expired, cancelled, or all")
	limit := fs.Int("limit", 100, "list at most `n` interactions")
	asJSON := fs.Bool("json", false, "print the interactions as a JSON array")
	project := fs.String("project", "", "only a project's: its `directory` (metadata project, else the agent's cwd)")
	session := fs.String("session", "", "only a session's: its `id` (session_id)")
	var agents []string
	fs.Func("agent", "only an agent's: its `name` (source_agent); repeatable", func(v string) error {
		agents = append(agents, v)
		return nil
	})
	base := serverFlag(fs)
	if code, ok := parse(fs, args, exitError); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hitl ls: unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return exitError
	}
	if *limit < 1 {
		fmt.Fprintln(stderr, "hitl ls: --limit must be at least 1")
		return exitError
	}
	f := hitl.ListFilter{Status: hitl.Status(*status), Project: *project, SessionID: *session, Agents: agents}
	if *status == "all" {
		f.Status = ""
	}

	c := newClient(*base)
	var list []*hitl.Interaction
	for len(list) < *limit {
		f.Limit = min(*limit-len(list), hitl.MaxListLimit)
		page, next, err := c.List(ctx, f)
		if err != nil {
			fmt.Fprintf(stderr, "hitl ls: %s\n", errText(err))
			return exitError
		}
		list = append(list, page...)
		if next == "" {
			break
		}
		f.Cursor = next
	}

	if *asJSON {
		if err := printJSONList(stdout, list); err != nil {
			fmt.Fprintf(stderr, "hitl ls: %v\n", err)
			return exitError
		}
		return 0
	}
	if len(list) == 0 {
		what := *status + " "
		if *status == "all" {
			what = ""
		}
		fmt.Fprintf(stderr, "no %sinteractions\n", what)
		return 0
	}
	writeTable(stdout, list, f.Status != hitl.StatusPending, time.Now())
	return 0
}

// writeTable prints interactions as aligned columns, with a STATUS column
// when they may differ in status.
func writeTable(w io.Writer, list []*hitl.Interaction, withStatus bool, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := "ID\tTYPE\tAGENT\tAGE\tDEADLINE-IN\tQUESTION"
	if withStatus {
		header = "ID\tTYPE\tSTATUS\tAGENT\tAGE\tDEADLINE-IN\tQUESTION"
	}
	fmt.Fprintln(tw, header)
	for _, in := range list {
		agent := in.SourceAgent
		if agent == "" {
			agent = in.CreatedBy
		}
		if agent == "" {
			agent = "-"
		}
		left := "-"
		if in.Status == hitl.StatusPending {
			if d := in.Deadline.Sub(now); d > 0 {
				left = shortDuration(d)
			} else {
				left = "overdue"
			}
		}
		cols := []string{in.ID, string(in.Type)}
		if withStatus {
			cols = append(cols, string(in.Status))
		}
		cols = append(cols, agent, shortDuration(now.Sub(in.CreatedAt)), left, truncate(in.Question, questionWidth))
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
	}
	tw.Flush()
}

// shortDuration renders d coarsely: 42s, 5m, 3h12m, 2d4h.
func shortDuration(d time.Duration) string {
	d = max(d, 0)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}

// truncate puts s on one line and cuts it to n characters, marking a cut
// with an ellipsis.
func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// runAnswer answers an interaction on the cli channel.
func runAnswer(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("answer", "hitl answer [flags] ID VALUE",
		"Answers a pending interaction. VALUE is sent as JSON when it is valid JSON\n"+
			"(true, [\"a\",\"b\"], {\"name\":\"x\"}), and as text otherwise; the server accepts\n"+
			"lenient forms such as yes/no for approvals and labels for option keys.\n"+
			"Several words after ID are joined with spaces.\n\n"+
			"An action is answered with a decision:\n"+
			"  hitl answer ID approve\n"+
			"  hitl answer ID reject [--message \"why not\"]\n"+
			"  hitl answer ID edit --args '{\"command\": \"make test\"}'\n"+
			"  hitl answer ID respond --message \"use make check instead\"", stderr)
	message := fs.String("message", "", "an action's reason to reject, or the reply of respond")
	editArgs := fs.String("args", "", "an action's edited arguments: a JSON `object`, or a file holding one")
	base := serverFlag(fs)
	if code, ok := parse(fs, args, exitError); !ok {
		return code
	}
	if fs.NArg() < 2 {
		fmt.Fprintln(stderr, "hitl answer: need an interaction ID and a VALUE")
		fs.Usage()
		return exitError
	}
	id := fs.Arg(0)
	value, err := answerValue(fs.Args()[1:], *message, *editArgs)
	if err != nil {
		fmt.Fprintf(stderr, "hitl answer: %v\n", err)
		return exitError
	}
	if _, err := newClient(*base).Respond(ctx, id, value); err != nil {
		fmt.Fprintf(stderr, "hitl answer: %s\n", errText(err))
		return exitError
	}
	fmt.Fprintln(stdout, "answered")
	return 0
}

// runCancel withdraws a pending interaction.
func runCancel(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("cancel", "hitl cancel [flags] ID",
		"Cancels a pending interaction; an agent waiting on it sees it cancelled.", stderr)
	reason := fs.String("reason", "", "why, shown to the agent and people (default agent_cancelled)")
	base := serverFlag(fs)
	if code, ok := parse(fs, args, exitError); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "hitl cancel: need exactly one interaction ID")
		fs.Usage()
		return exitError
	}
	if _, err := newClient(*base).Cancel(ctx, fs.Arg(0), *reason); err != nil {
		fmt.Fprintf(stderr, "hitl cancel: %s\n", errText(err))
		return exitError
	}
	fmt.Fprintln(stdout, "cancelled")
	return 0
}
