package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hitl-sh/hitl"
)

// runRule manages the rules that decide actions: hitl rule ls, add, rm.
func runRule(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runSubcommand(ctx, "rule", "Manages the rules that decide actions without asking anyone: a rule\n"+
		"allows (approves) or denies (rejects) the matching calls of one tool by one\n"+
		"agent, or by every agent (*). Deny beats allow. They work through a running\n"+
		"server (--server or HITL_URL, HITL_TOKEN): admins make rules and see them\n"+
		"all; a person sees and removes the rules they made by answering an action\n"+
		"with \"always\".",
		[]subcommand{
			{"ls", "list rules (those in force; --all for every one)", runRuleList},
			{"add", "make a rule (admins)", runRuleAdd},
			{"rm", "revoke a rule (it is kept, for the audit trail)", runRuleRemove},
		}, args, os.Stdin, stdout, stderr)
}

// runRuleList lists rules as a table or JSON.
func runRuleList(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("rule ls", "hitl rule ls [flags]", "Lists the rules in force, oldest first (those you may see).", stderr)
	all := fs.Bool("all", false, "also list revoked and expired rules")
	agent := fs.String("agent", "", "only the rules of this source `agent`")
	action := fs.String("action", "", "only the rules of this action `name`")
	asJSON := fs.Bool("json", false, "print the rules as a JSON array")
	base := serverFlag(fs)
	if code, ok := parse(fs, args, exitError); !ok {
		return code
	}
	f := hitl.RuleFilter{SourceAgent: *agent, ActionName: *action, Limit: hitl.MaxListLimit}
	if !*all {
		f.ActiveAt = time.Now()
	}
	c := newClient(*base)
	var rules []*hitl.Rule
	for {
		page, next, err := c.Rules(ctx, f)
		if err != nil {
			fmt.Fprintf(stderr, "hitl rule ls: %s\n", errText(err))
			return exitError
		}
		rules = append(rules, page...)
		if next == "" {
			break
		}
		f.Cursor = next
	}
	if *asJSON {
		if err := printJSONList(stdout, rules); err != nil {
			fmt.Fprintf(stderr, "hitl rule ls: %v\n", err)
			return exitError
		}
		return 0
	}
	if len(rules) == 0 {
		fmt.Fprintln(stderr, "no rules")
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tEFFECT\tAGENT\tACTION\tMATCH\tEXPIRES\tBY")
	for _, r := range rules {
		expires := "never"
		switch {
		case r.RevokedAt != nil:
			expires = "revoked"
		case r.ExpiresAt != nil:
			expires = r.ExpiresAt.Local().Format("2006-01-02 15:04")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Effect, r.SourceAgent, r.ActionName, truncate(describeMatch(r.Match), 40), expires, r.CreatedBy)
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintf(stderr, "hitl rule ls: %v\n", err)
		return exitError
	}
	return 0
}

// describeMatch renders a match for the table: "command starts with git
// status", "file_path ~ src/**", "to = \"ops@…\"", or "any call".
func describeMatch(m *hitl.RuleMatch) string {
	switch {
	case m == nil:
		return "any call"
	case m.Prefix != "":
		return m.Arg + " starts with " + m.Prefix
	case m.Command != "":
		return m.Arg + " is " + m.Command
	case m.Glob != "":
		return m.Arg + " ~ " + m.Glob
	}
	return m.Arg + " = " + string(m.Equals)
}

// runRuleAdd makes a rule and prints its ID.
func runRuleAdd(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("rule add", "hitl rule add --agent AGENT --action NAME [--prefix P | --command C | --glob G | --equals JSON] [flags]",
		"Makes a rule (admins only) and prints its ID. Without --prefix, --command,\n"+
			"--glob or --equals it decides every call of the action.\n\n"+
			"An allow rule reads its match narrowly: --prefix \"git status\" allows one\n"+
			"plain command that starts with those words (\"git status -s\", and also\n"+
			"\"git status --output=/tmp/x\"), never one with ; & | ` $ > < * or a line\n"+
			"break; --command allows that command only, with no further arguments;\n"+
			"--glob allows a path (\"src/**\") that has no \"..\".\n\n"+
			"A deny rule reads it widely: --prefix \"git push\" denies any command that\n"+
			"may run git push (\"x; git push\", \"env git push\", \"git -C . push\",\n"+
			"\"bash -c 'git push'\"), --glob \"/etc/**\" any path that lands there\n"+
			"(\"/tmp/../etc/x\", \"/ETC/x\"); where only running the command would tell\n"+
			"(\"$GIT push\"), a person decides and no allow rule applies.", stderr)
	agent := fs.String("agent", "", "the source `agent` whose actions it decides, or * for every agent (required)")
	action := fs.String("action", "", "the action `name`, such as Bash (required)")
	prefix := fs.String("prefix", "", "match a shell command starting with this `prefix`")
	command := fs.String("command", "", "match exactly this shell `command` (an allow rule allows no further arguments)")
	glob := fs.String("glob", "", "match a path by this doublestar `pattern`")
	equals := fs.String("equals", "", "match an argument equal to this `JSON` value")
	arg := fs.String("arg", "", "the `argument` to match (default command for --prefix and --command, file_path for --glob)")
	deny := fs.Bool("deny", false, "deny (reject) instead of allow")
	message := fs.String("message", "", "the reason a deny rule gives the agent")
	ttl := fs.Duration("ttl", 0, "how long the rule lasts, e.g. 24h (default: until revoked)")
	base := serverFlag(fs)
	if code, ok := parse(fs, args, exitError); !ok {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "hitl rule add: "+format+"\n", a...)
		return exitError
	}
	if fs.NArg() > 0 {
		return fail("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	req := hitl.RuleRequest{Effect: hitl.RuleAllow, SourceAgent: *agent, ActionName: *action, Message: *message, TTLSeconds: ttl.Seconds()}
	if *deny {
		req.Effect = hitl.RuleDeny
	}
	if *ttl < 0 {
		return fail("--ttl must be positive")
	}
	m, err := ruleMatch(*arg, *prefix, *command, *glob, *equals)
	if err != nil {
		return fail("%v", err)
	}
	req.Match = m
	r, err := newClient(*base).CreateRule(ctx, req)
	if err != nil {
		return fail("%s", errText(err))
	}
	fmt.Fprintln(stdout, r.ID)
	return 0
}

// ruleMatch builds the match of hitl rule add's flags; nil for none.
func ruleMatch(arg, prefix, command, glob, equals string) (*hitl.RuleMatch, error) {
	m := &hitl.RuleMatch{Arg: arg, Prefix: prefix, Command: command, Glob: glob}
	switch {
	case (prefix != "" || command != "") && m.Arg == "":
		m.Arg = "command"
	case glob != "" && m.Arg == "":
		m.Arg = "file_path"
	}
	if equals != "" {
		if !json.Valid([]byte(equals)) {
			return nil, fmt.Errorf("--equals is not valid JSON (a string needs its quotes: '\"x\"')")
		}
		if arg == "" {
			return nil, fmt.Errorf("--equals needs --arg, the argument to compare")
		}
		m.Equals = json.RawMessage(equals)
	}
	if prefix == "" && command == "" && glob == "" && equals == "" {
		if arg != "" {
			return nil, fmt.Errorf("--arg goes with --prefix, --command, --glob or --equals")
		}
		return nil, nil
	}
	return m, nil
}

// runRuleRemove revokes a rule.
func runRuleRemove(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("rule rm", "hitl rule rm [flags] ID",
		"Revokes a rule: it decides nothing from now on, and is kept (with who\nrevoked it and when) for the audit trail.", stderr)
	base := serverFlag(fs)
	if code, ok := parse(fs, args, exitError); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "hitl rule rm: need exactly one rule ID")
		fs.Usage()
		return exitError
	}
	if _, err := newClient(*base).RevokeRule(ctx, fs.Arg(0)); err != nil {
		fmt.Fprintf(stderr, "hitl rule rm: %s\n", errText(err))
		return exitError
	}
	fmt.Fprintln(stdout, "revoked")
	return 0
}
