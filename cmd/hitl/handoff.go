package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/ask"
)

// runHandoff gives a conversation to a person: it prints the handoff's id
// at once and, with --wait, waits for the person's reply and prints it.
func runHandoff(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("handoff", `hitl handoff [flags] "message"`,
		"Hands a conversation to a person: the agent's message (and --context) reaches\n"+
			"them in the inbox and, for --session, in the chat frontend showing that\n"+
			"conversation; the person's reply is the handoff's answer.\n\n"+
			"Without --wait it prints the handoff's id on stdout at once and exits 0.\n"+
			"With --wait it prints the id on stderr, waits for the reply and prints it on\n"+
			"stdout. Ctrl-C stops waiting and leaves the handoff pending.\n\n"+
			"Exit codes: 0 handed off (with --wait: replied), 2 no reply before the\n"+
			"deadline, 3 cancelled (or interrupted while waiting), 4 error.\n\n"+
			"HITL_TOKEN, if set, is sent as a bearer token.", stderr)
	contextText := fs.String("context", "", "what the person needs to know (Markdown)")
	session := fs.String("session", "", "the conversation's `id` (session_id)")
	timeout := fs.Duration("timeout", 0, "how long a reply is awaited, e.g. 8h (default: the server's, 1h)")
	key := fs.String("id", "", "idempotency `key`: handing off again with the same key and message\nreturns the same handoff")
	agent := fs.String("agent", envOr("HITL_AGENT", ""), "agent `name` shown to the person (HITL_AGENT)")
	var users, groups []string
	fs.Func("user", "a person who may take it (`name`); repeatable (default: anyone)", func(s string) error {
		users = append(users, s)
		return nil
	})
	fs.Func("group", "a group whose members may take it (`name`); repeatable", func(s string) error {
		groups = append(groups, s)
		return nil
	})
	wait := fs.Bool("wait", false, "wait for the person's reply and print it")
	base := serverFlag(fs)
	if code, ok := parse(fs, args, exitError); !ok {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "hitl handoff: "+format+"\n", a...)
		return exitError
	}
	message := strings.TrimSpace(strings.Join(fs.Args(), " "))
	if message == "" {
		return fail("the message is required: say why you hand the conversation over")
	}
	req := hitl.HandoffRequest{Message: message, Context: *contextText, SessionID: *session, Timeout: timeout.Seconds(),
		IdempotencyKey: *key, SourceAgent: *agent}
	if len(users) > 0 || len(groups) > 0 {
		req.Targets = &hitl.Targets{Users: users, Groups: groups}
	}

	c := newClient(*base)
	id, err := c.Handoff(ctx, req)
	if err != nil {
		return fail("%s", errText(err))
	}
	if !*wait {
		fmt.Fprintln(stdout, id)
		return exitAnswered
	}
	fmt.Fprintf(stderr, "hitl handoff: handed off as %s; waiting for a reply\n", id)
	reply, err := ask.Reply(ctx, c, id)
	switch {
	case err == nil:
		fmt.Fprintln(stdout, reply)
		return exitAnswered
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "hitl handoff: interrupted; handoff %s is still pending\n", id)
		return exitCancelled
	}
	fmt.Fprintf(stderr, "hitl handoff: %s\n", errText(err))
	switch hitl.ErrorCode(err) {
	case hitl.EEXPIRED:
		return exitExpired
	case hitl.ECANCELLED:
		return exitCancelled
	}
	return exitError
}
