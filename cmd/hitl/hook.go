package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/agents"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/tools"
)

// maxHookInput bounds what hitl hook reads from stdin: a Write of a large
// file sends the whole file (a call that large is denied: an action's
// arguments are bounded far below).
const maxHookInput = 16 << 20

// Exit codes of hitl hook claude-code: 0 with a decision on stdout (every
// failure of hitl included: a deny), 2 when there is nothing to decide on
// (bad flags, input that is not a hook's), which blocks the call in Claude
// Code, and 1 for an event hitl does not answer, which Claude Code reports
// and ignores.
const (
	exitHookDecided     = 0
	exitHookUnsupported = 1
	exitHookBlocked     = 2
)

// hookHelp is hitl hook claude-code's description.
const hookHelp = "A Claude Code command hook: it reads the hook's input on stdin, asks a person\n" +
	"in hitl whether the tool call may run (an action: approve, edit, reject or\n" +
	"respond; a rule may decide at once) and prints the decision in the hook's\n" +
	"output shape, for the PreToolUse and PermissionRequest events. An edit\n" +
	"runs the call with the edited input; a reject or a reply denies it, and\n" +
	"Claude Code hands the reason to the model.\n\n" +
	"It always prints a decision: when hitl cannot be reached, fails, or the\n" +
	"question expires or is cancelled, it denies the call with the reason\n" +
	"(--on-error ask leaves it to Claude Code's own prompt instead). Claude Code\n" +
	"ignores a hook that runs past its \"timeout\" setting, so --timeout must stay\n" +
	"below it: --print-settings prints settings that set both. Input that is not\n" +
	"a hook's exits 2, which blocks the call.\n\n" +
	"HITL_URL and HITL_TOKEN (an agent token) as for the other commands."

// runHook dispatches hitl hook's agents.
func runHook(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "claude-code" {
		return runClaudeCodeHook(ctx, args[1:], os.Stdin, stdout, stderr)
	}
	if len(args) > 0 {
		if a, ok := agents.Lookup(args[0]); ok {
			return runAgentHook(ctx, a, args[1:], os.Stdin, stdout, stderr)
		}
	}
	fs := newFlagSet("hook", "hitl hook <agent> [flags]", "Answers an agent's permission hooks through hitl. Agents:\n"+
		"  claude-code   Claude Code's PreToolUse and PermissionRequest hooks\n"+
		"  codex         Codex's PreToolUse hook\n"+
		"  gemini-cli    Gemini CLI's BeforeTool hook\n"+
		"  copilot-cli   GitHub Copilot CLI's preToolUse hook (also: copilot)\n"+
		"  opencode      OpenCode, through hitl's plugin (--print-plugin prints it)\n"+
		"  cursor        Cursor's beforeShellExecution, beforeMCPExecution and beforeReadFile hooks\n"+
		"  cline         Cline's PreToolUse hook (a script in ~/.cline/hooks that --print-settings prints)\n\n"+
		"Run \"hitl hook <agent> -h\" for its flags.", stderr)
	if code, ok := parse(fs, args, exitHookBlocked); !ok {
		return code
	}
	fs.Usage()
	return exitHookBlocked
}

// hookFlags are hitl hook claude-code's flags.
type hookFlags struct {
	server, agent, onError string
	timeout, deferAfter    time.Duration
	print, http            bool
	event, matcher         string
	serverSet              bool
}

// register adds the flags to fs.
func (f *hookFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.server, "server", envOr("HITL_URL", defaultServerURL), "hitl server `URL` (HITL_URL)")
	fs.StringVar(&f.agent, "agent", envOr("HITL_AGENT", tools.ClaudeCodeAgent), "agent `name` the questions (and the rules made from them) are scoped to (HITL_AGENT)")
	fs.DurationVar(&f.timeout, "timeout", tools.DefaultReviewTimeout, "how long a person has to decide; keep it a minute below the hook's timeout")
	fs.StringVar(&f.onError, "on-error", string(tools.OnErrorDeny), "when hitl cannot decide: deny the call, or ask (leave it to Claude Code's prompt)")
	fs.DurationVar(&f.deferAfter, "defer-after", 0, "PreToolUse in claude -p: when nobody has decided after this `long`, answer defer: Claude Code\nstops, the question stays open in hitl (for --timeout), and claude -p --resume SESSION asks\nagain and gets the answer (0: wait for the whole --timeout)")
	fs.BoolVar(&f.print, "print-settings", false, "print the Claude Code settings (.claude/settings.json) that run this hook, and exit")
	fs.BoolVar(&f.http, "http", false, "with --print-settings: settings for hitl's HTTP hook endpoint instead (it fails open when hitl is down)")
	fs.StringVar(&f.event, "event", tools.HookPreToolUse, "with --print-settings: the `event`, PreToolUse (every call the matcher names) or\nPermissionRequest (only the calls Claude Code would ask about)")
	fs.StringVar(&f.matcher, "matcher", defaultHookMatcher, "with --print-settings: the tools to review, a Claude Code matcher")
}

// check validates the flags.
func (f *hookFlags) check() error {
	switch {
	case f.timeout < time.Second:
		return fmt.Errorf("--timeout must be at least 1s")
	case !tools.OnError(f.onError).Valid():
		return fmt.Errorf("--on-error must be deny or ask")
	case f.event != tools.HookPreToolUse && f.event != tools.HookPermissionRequest:
		return fmt.Errorf("--event must be PreToolUse or PermissionRequest")
	case strings.TrimSpace(f.matcher) == "":
		return fmt.Errorf("--matcher must not be empty")
	case f.deferAfter < 0 || f.deferAfter > 0 && f.deferAfter < time.Second:
		return fmt.Errorf("--defer-after must be at least 1s (or 0, never)")
	case f.deferAfter > 0 && f.deferAfter >= f.timeout:
		return fmt.Errorf("--defer-after must be shorter than --timeout, which is how long the question stays open")
	case f.deferAfter > 0 && f.event != tools.HookPreToolUse:
		return fmt.Errorf("--defer-after is for the PreToolUse event: Claude Code defers only there")
	case f.deferAfter > 0 && f.http:
		return fmt.Errorf("--defer-after is for the command hook")
	}
	return nil
}

// runClaudeCodeHook answers one Claude Code hook: input on stdin, decision
// on stdout.
func runClaudeCodeHook(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("hook claude-code", "hitl hook claude-code [flags]", hookHelp, stderr)
	var f hookFlags
	f.register(fs)
	if code, ok := parse(fs, args, exitHookBlocked); !ok {
		return code
	}
	fs.Visit(func(fl *flag.Flag) { f.serverSet = f.serverSet || fl.Name == "server" })
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "hitl hook claude-code: "+format+"\n", a...)
		return exitHookBlocked
	}
	if fs.NArg() > 0 {
		return fail("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if err := f.check(); err != nil {
		return fail("%v", err)
	}
	if f.print {
		if err := printHookSettings(stdout, stderr, &f); err != nil {
			return fail("%v", err)
		}
		return exitHookDecided
	}
	data, err := io.ReadAll(io.LimitReader(stdin, maxHookInput+1))
	switch {
	case err != nil:
		return fail("read the hook input: %v", err)
	case len(data) > maxHookInput:
		return fail("the hook input is larger than %d bytes", maxHookInput)
	}
	in, err := tools.ParseHookInput(data)
	if err != nil {
		return fail("%s", hitl.ErrorMessage(err))
	}
	if err := in.Supported(); err != nil {
		fmt.Fprintf(stderr, "hitl hook claude-code: %s\n", hitl.ErrorMessage(err))
		return exitHookUnsupported
	}
	out, v := decideHook(ctx, &f, in)
	fmt.Fprintln(stdout, string(out))
	if v.Failed {
		fmt.Fprintf(stderr, "hitl hook claude-code: %s\n", v.Reason)
	}
	return exitHookDecided
}

// decideHook reviews the call through the server and returns the hook's
// output. A panic is a deny too (and a crash that escapes this exits 2,
// which Claude Code takes as a block).
func decideHook(ctx context.Context, f *hookFlags, in *tools.HookInput) (out []byte, v *tools.Verdict) {
	onError := tools.OnError(f.onError)
	defer func() {
		if p := recover(); p != nil {
			v = &tools.Verdict{Failed: true, Reason: fmt.Sprintf("hitl could not get a decision on this %s call, so it is denied: hitl hook crashed (%v).", in.ToolName, p)}
			out = tools.HookOutput(in.HookEventName, v, onError)
		}
	}()
	c := client.New(f.server, &client.Options{
		HTTPClient: mcpHTTPClient(),
		Token:      os.Getenv("HITL_TOKEN"),
		Channel:    hitl.ChannelCLI,
	})
	return tools.Hook(ctx, c, in, &tools.HookOptions{
		ReviewOptions: tools.ReviewOptions{SourceAgent: f.agent, Timeout: f.timeout},
		OnError:       onError,
		DeferAfter:    f.deferAfter,
	})
}
