// Command hitl is the human-in-the-loop server and its command-line client.
//
//	hitl serve                 run the server (web inbox, HTTP API, streams)
//	hitl ask "Deploy?"         ask a question and block until it is answered
//	hitl ls                    list pending interactions
//	hitl answer ID VALUE       answer an interaction
//	hitl cancel ID             withdraw an interaction
//	hitl purge --older-than 30d delete what ended long ago (serve --retention does it too)
//	hitl rule ls               rules that decide actions; also add, rm
//	hitl receipt verify R      check an approved action's signed receipt
//	hitl mcp                   MCP tools over stdio (for Claude Code, Cursor, …)
//	hitl hook claude-code      a Claude Code hook: a person approves each tool call
//	                           (also hitl hook codex, hitl hook gemini-cli)
//	hitl tools --format X      tool definitions for OpenAI, Anthropic or MCP
//	hitl token create --name N make an API token (for agents); also ls, revoke
//	hitl user add NAME         add a person who logs in; also ls, rm, passwd
//	hitl health                exit 0 when the server is ready (/readyz)
//	hitl version               print the version, commit and build date
//
// Run "hitl help" or "hitl <command> -h" for details.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/hitl-sh/hitl"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, let a second one kill the process.
		<-ctx.Done()
		stop()
	}()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// commands lists the subcommands in the order "hitl help" shows them.
func commands() []command {
	return []command{
		{"serve", "run the server", runServe},
		{"ask", "ask a question and wait for the answer", runAsk},
		{"handoff", "hand a conversation to a person; --wait for the reply", runHandoff},
		{"ls", "list interactions (pending by default)", runList},
		{"answer", "answer an interaction", runAnswer},
		{"cancel", "cancel a pending interaction", runCancel},
		{"purge", "delete interactions that ended long ago", runPurge},
		{"rule", "manage the rules that decide actions: ls, add, rm", runRule},
		{"webhook", "manage webhooks: add, ls, rm, secret", runWebhook},
		{"receipt", "check approved actions' signed receipts: verify, rotate-key", runReceipt},
		{"mcp", "serve the MCP tools over stdio for a running server", runMCP},
		{"gate", "put a person in front of an MCP server's tool calls", runGate},
		{"hook", "review coding agents' tool calls as a hook: hook claude-code, codex, gemini-cli", runHook},
		{"tools", "print the tool definitions for function calling", runTools},
		{"token", "manage API tokens: create, ls, revoke", runToken},
		{"embed-token", "manage the chat prompt's embed tokens: create, ls, revoke", runEmbedToken},
		{"user", "manage people who log in: add, ls, rm, passwd", runUser},
		{"bench", "measure the whole human loop on this machine", runBench},
		{"health", "check that a running server is ready (for container health checks)", runHealth},
		{"version", "print the version, commit and build date", runVersion},
		{"help", "show help for a command", nil},
	}
}

// run runs the command line args (without the program name) and returns
// the exit code. ctx ends on SIGINT or SIGTERM.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(rest) > 0 && rest[0] != "help" {
			if c, ok := lookup(rest[0]); ok {
				return c.run(ctx, []string{"-h"}, stdout, stdout)
			}
			fmt.Fprintf(stderr, "hitl: unknown command %q\n", rest[0])
			return 2
		}
		usage(stdout)
		return 0
	case "-version", "--version":
		return runVersion(ctx, nil, stdout, stderr)
	}
	c, ok := lookup(name)
	if !ok {
		fmt.Fprintf(stderr, "hitl: unknown command %q\n\n", name)
		usage(stderr)
		return 2
	}
	return c.run(ctx, rest, stdout, stderr)
}

// lookup finds a runnable subcommand by name.
func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name && c.run != nil {
			return c, true
		}
	}
	return command{}, false
}

// usage prints the overview.
func usage(w io.Writer) {
	fmt.Fprint(w, "hitl — a human-in-the-loop server for AI agents\n\nUsage:\n  hitl <command> [flags] [arguments]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nRun \"hitl <command> -h\" for a command's flags.\n")
}

// flagSetMade, when set, is told of every flag set newFlagSet makes: the
// configuration reference (docs/configuration.md) is generated from them.
var flagSetMade func(*flag.FlagSet)

// newFlagSet returns a flag set whose -h prints synopsis, description and
// the flags to w.
func newFlagSet(name, synopsis, description string, w io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	if flagSetMade != nil {
		flagSetMade(fs)
	}
	fs.SetOutput(w)
	fs.Usage = func() {
		fmt.Fprintf(w, "Usage: %s\n\n%s\n", synopsis, description)
		var n int
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprint(w, "\nFlags:\n")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parse parses args into fs, allowing flags after positional arguments
// ("hitl ask 'Deploy?' --type approval"); "--" ends the flags. It returns
// ok false with the exit code to use: 0 for -h, errCode for bad flags.
func parse(fs *flag.FlagSet, args []string, errCode int) (int, bool) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0, false
			}
			return errCode, false
		}
		rest := fs.Args()
		consumed := args[:len(args)-len(rest)]
		if len(rest) == 0 || len(consumed) > 0 && consumed[len(consumed)-1] == "--" {
			positional = append(positional, rest...)
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	// Leave the positional arguments where fs.Args() finds them.
	_ = fs.Parse(append([]string{"--"}, positional...))
	if err := checkEnvBools(fs); err != nil {
		fmt.Fprintf(fs.Output(), "hitl %s: %v\n", fs.Name(), err)
		return errCode, false
	}
	return 0, true
}

// errText is what to print for err: the server's message for an
// application error, the whole chain otherwise.
func errText(err error) string {
	var he *hitl.Error
	if errors.As(err, &he) {
		return he.Message
	}
	return err.Error()
}
