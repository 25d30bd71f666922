package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/hitl-sh/hitl"
	"github.com/hitl-sh/hitl/agents"
	"github.com/hitl-sh/hitl/client"
	"github.com/hitl-sh/hitl/tools"
)

// agentHookHelp is the description of hitl hook codex, gemini-cli,
// copilot-cli and opencode; %[1]s is the agent's name for a person, %[2]s
// its event, %[3]s the flag's name, %[4]s what its --print-settings
// prints, %[5]s what the agent does when its hook fails, %[6]s the flag
// that prints it.
const agentHookHelp = "A %[1]s command hook (%[2]s): it reads the hook's input on stdin, asks a\n" +
	"person in hitl whether the tool call may run (an action: approve, edit,\n" +
	"reject or respond; a rule may decide at once) and prints the decision in\n" +
	"%[1]s's output shape. An edit runs the call with the edited input; a reject\n" +
	"or a reply denies it, and the model reads the reason.\n\n" +
	"It always prints a decision: when hitl cannot be reached, fails, refuses\n" +
	"the token, or the question expires or is cancelled, it denies the call with\n" +
	"the reason, and exits 0. %[5]s,\n" +
	"so --timeout must stay below the hook's timeout: --%[6]s prints\n" +
	"%[4]s that set both.\n" +
	"Input that is not the hook's exits 2, which blocks the call.\n\n" +
	"HITL_URL and HITL_TOKEN (an agent token) as for the other commands."

// agentHookFlags are the flags of hitl hook codex, gemini-cli and
// copilot-cli.
type agentHookFlags struct {
	server, agent, onError, matcher string
	timeout, waitAtMost             time.Duration
	print, serverSet                bool
}

// runAgentHook answers one hook of agent a (Codex, Gemini CLI or Copilot
// CLI): input on stdin, decision on stdout; or, with --print-settings,
// prints the configuration that runs it.
func runAgentHook(ctx context.Context, a *agents.Agent, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	what := "the hooks.json"
	matcher := agents.CodexMatcher
	failsOpen := a.Display + " runs the call when its hook exits 1, prints what it\ncannot read, crashes or outlives its timeout"
	printFlag := "print-settings"
	switch a {
	case agents.Gemini:
		what, matcher = "the settings.json hooks", agents.GeminiMatcher
	case agents.Copilot:
		what, matcher = "the settings.json hooks", agents.CopilotMatcher
		failsOpen = a.Display + " runs the call when its hook prints what it\ncannot read or outlives its timeout"
	case agents.Cursor:
		what = "the hooks.json"
		failsOpen = a.Display + "'s documentation does not say what it does when its hook fails or\noutlives its timeout"
	case agents.OpenCode:
		what, matcher, printFlag = "hitl's plugin", agents.OpenCodeMatcher, "print-plugin"
		failsOpen = a.Display + " has no command hooks: hitl's plugin runs this for each call,\nand denies the call when it fails, prints what it cannot read or outlives\nits wait"
	}
	fs := newFlagSet("hook "+a.Name, "hitl hook "+a.Name+" [flags]", fmt.Sprintf(agentHookHelp, a.Display, a.Event, a.Name, what, failsOpen, printFlag), stderr)
	var f agentHookFlags
	fs.StringVar(&f.server, "server", envOr("HITL_URL", defaultServerURL), "hitl server `URL` (HITL_URL)")
	fs.StringVar(&f.agent, "agent", envOr("HITL_AGENT", a.Name), "agent `name` the questions (and the rules made from them) are scoped to (HITL_AGENT)")
	fs.DurationVar(&f.timeout, "timeout", tools.DefaultReviewTimeout, "how long a person has to decide; the hook's own timeout must be a minute longer\n(than --wait-at-most, when given)")
	fs.DurationVar(&f.waitAtMost, "wait-at-most", 0, "wait at most this `long` for the person; then deny the call saying the question is\nstill open in hitl (for --timeout), and the same call made again picks up the\nanswer (0: wait for the whole --timeout)")
	onErrorHelp := "when hitl cannot decide: deny the call (" + a.Display + " ignores \"ask\" and would run it)"
	switch {
	case a == agents.Copilot, a == agents.OpenCode:
		onErrorHelp = "when hitl cannot decide: deny the call (the only choice)"
	case a == agents.Cursor:
		onErrorHelp = "when hitl cannot decide: deny the call, or ask (Cursor's own prompt)"
	case a.CanAsk:
		onErrorHelp = "when hitl cannot decide: deny the call, or ask (" + a.Display + "'s own confirmation;\na headless run ends at once)"
	}
	fs.StringVar(&f.onError, "on-error", string(tools.OnErrorDeny), onErrorHelp)
	fs.BoolVar(&f.print, printFlag, false, "print "+what+" that run this hook (notes on stderr), and exit")
	if a != agents.Cursor && a != agents.Cline {
		fs.StringVar(&f.matcher, "matcher", matcher, "with --"+printFlag+": the tools to review, a regular expression over their names")
	}
	if code, ok := parse(fs, args, agents.ExitBlocked); !ok {
		return code
	}
	fs.Visit(func(fl *flag.Flag) { f.serverSet = f.serverSet || fl.Name == "server" })
	fail := func(format string, args ...any) int {
		fmt.Fprintf(stderr, "hitl hook "+a.Name+": "+format+"\n", args...)
		return agents.ExitBlocked
	}
	if fs.NArg() > 0 {
		return fail("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if err := f.check(a); err != nil {
		return fail("%v", err)
	}
	if f.print {
		if err := printAgentSettings(stdout, stderr, a, &f); err != nil {
			return fail("%v", err)
		}
		return agents.ExitDecided
	}
	c := client.New(f.server, &client.Options{
		HTTPClient: mcpHTTPClient(),
		Token:      os.Getenv("HITL_TOKEN"),
		Channel:    hitl.ChannelCLI,
	})
	return a.Run(ctx, c, stdin, stdout, stderr, &agents.Options{
		ReviewOptions: tools.ReviewOptions{SourceAgent: f.agent, Timeout: f.timeout},
		OnError:       tools.OnError(f.onError),
		WaitAtMost:    f.waitAtMost,
	})
}

// check validates the flags.
func (f *agentHookFlags) check(a *agents.Agent) error {
	switch {
	case f.timeout < time.Second:
		return fmt.Errorf("--timeout must be at least 1s")
	case !tools.OnError(f.onError).Valid():
		return fmt.Errorf("--on-error must be deny or ask")
	case f.onError == string(tools.OnErrorAsk) && a == agents.OpenCode:
		return fmt.Errorf("--on-error must be deny: hitl's OpenCode plugin cannot ask")
	case f.onError == string(tools.OnErrorAsk) && a == agents.Copilot:
		return fmt.Errorf("--on-error must be deny: headless, %s denies a call its hook answers \"ask\", without hitl's reason", a.Display)
	case f.onError == string(tools.OnErrorAsk) && !a.CanAsk:
		return fmt.Errorf("--on-error must be deny: %s runs a call its hook answers \"ask\"", a.Display)
	case strings.TrimSpace(f.agent) == "":
		return fmt.Errorf("--agent must not be empty")
	case f.waitAtMost < 0 || f.waitAtMost > 0 && f.waitAtMost < time.Second:
		return fmt.Errorf("--wait-at-most must be at least 1s (or 0, the whole --timeout)")
	case f.waitAtMost >= f.timeout:
		if f.waitAtMost > 0 {
			return fmt.Errorf("--wait-at-most must be shorter than --timeout, which is how long the question stays open")
		}
	}
	if a == agents.Cursor || a == agents.Cline {
		return nil // their hooks take no matcher
	}
	if _, err := regexp.Compile(f.matcher); err != nil || strings.TrimSpace(f.matcher) == "" {
		return fmt.Errorf("--matcher must be a regular expression over tool names")
	}
	if a == agents.Copilot {
		if err := agents.CheckCopilotMatcher(f.matcher); err != nil {
			return fmt.Errorf("--matcher: %v", err)
		}
	}
	return nil
}

// wait is how long the hook waits for the person: --wait-at-most, or the
// whole --timeout.
func (f *agentHookFlags) wait() time.Duration {
	if f.waitAtMost > 0 {
		return f.waitAtMost
	}
	return f.timeout
}

// waitText names how long the hook waits, for the printed notes.
func (f *agentHookFlags) waitText() string {
	if f.waitAtMost > 0 {
		return "its wait (--wait-at-most " + seconds(f.waitAtMost) + "; the question stays open for --timeout)"
	}
	return "the question (--timeout " + seconds(f.timeout) + ")"
}

// argv is the hook's command: this program by its absolute path (so that
// the hook does not depend on the agent's PATH, and Codex's trusted hash
// on where hitl is found), and the flags that change what it does, the
// timeout always.
func (f *agentHookFlags) argv(a *agents.Agent) []string {
	prog := "hitl"
	if exe, err := os.Executable(); err == nil && filepath.IsAbs(exe) {
		prog = exe
	}
	args := []string{prog, "hook", a.Name, "--timeout", seconds(f.timeout)}
	if f.agent != a.Name {
		args = append(args, "--agent", f.agent)
	}
	if f.onError != string(tools.OnErrorDeny) {
		args = append(args, "--on-error", f.onError)
	}
	if f.waitAtMost > 0 {
		args = append(args, "--wait-at-most", seconds(f.waitAtMost))
	}
	if f.serverSet {
		args = append(args, "--server", f.server)
	}
	return args
}

// command is the hook's command line: argv, quoted for sh.
func (f *agentHookFlags) command(a *agents.Agent) string {
	words := f.argv(a)
	for i, w := range words {
		words[i] = shellWord(w)
	}
	return strings.Join(words, " ")
}

// printAgentSettings prints the configuration that runs the hook as f
// describes it on stdout (OpenCode's: hitl's plugin), and on stderr where
// it goes, how to trust it, and what the agent runs when its hook fails.
func printAgentSettings(stdout, stderr io.Writer, a *agents.Agent, f *agentHookFlags) error {
	hookTimeout := agents.HookTimeout(f.wait())
	var settings any
	var notes strings.Builder
	switch a {
	case agents.Cline:
		if agents.HookTimeout(f.wait()).Seconds() > agents.ClineHookTimeout {
			return fmt.Errorf("--wait-at-most must be 60s or less: Cline runs the call when its hook outlives %d s", agents.ClineHookTimeout)
		}
		fmt.Fprintf(stdout, "#!/bin/sh\n# Cline's PreToolUse hook: asks hitl before every tool call.\nexec %s\n", f.command(a))
		fmt.Fprintf(stderr, "# Save the script above as ~/.cline/hooks/PreToolUse (every project) or\n")
		fmt.Fprintf(stderr, "# <project>/.clinerules/hooks/PreToolUse (one project). Cline runs it for every tool call and\n")
		fmt.Fprintf(stderr, "# runs the call when it outlives %d s or prints what Cline cannot read: so %s\n", agents.ClineHookTimeout, f.waitText())
		fmt.Fprintf(stderr, "# ends a minute before. A deny, and every failure of hitl, prints a cancel: Cline ends the whole task,\n")
		fmt.Fprintf(stderr, "# and shows the reason to the user, not the model. An edit runs the edited input.\n")
		return nil
	case agents.OpenCode:
		argv := f.argv(a)
		plugin := agents.OpenCodePlugin(argv[0], argv[1:], f.matcher, f.wait())
		fmt.Fprintf(&notes, "# Save the plugin above as ~/.config/opencode/plugin/hitl.js (every project) or\n")
		fmt.Fprintf(&notes, "# .opencode/plugin/hitl.js (one project); OpenCode loads it at start. Its tool.execute.before runs\n")
		fmt.Fprintf(&notes, "# %s for each call of the tools %s names, with the\n", shellWord(argv[0])+" hook opencode", f.matcher)
		fmt.Fprintf(&notes, "# environment OpenCode has (HITL_URL, HITL_TOKEN), and throws, which blocks the call, on a deny\n")
		fmt.Fprintf(&notes, "# and on every failure. %s ends a minute before the plugin\n", f.waitText())
		fmt.Fprintf(&notes, "# stops waiting (%d s). OpenCode's own permissions still apply after an allow from hitl.\n", int(hookTimeout.Seconds()))
		if _, err := io.WriteString(stdout, plugin); err != nil {
			return err
		}
		_, err := io.WriteString(stderr, notes.String())
		return err
	case agents.Codex:
		settings = agents.CodexSettings(f.command(a), f.matcher, f.wait())
		home, err := agents.CodexHome()
		if err != nil {
			return err
		}
		hooksFile := filepath.Join(home, "hooks.json")
		trust, err := agents.CodexTrust(hooksFile, settings)
		if err != nil {
			return err
		}
		fmt.Fprintf(&notes, "# Put the JSON above in %s ($CODEX_HOME/hooks.json; merge it if the file exists).\n", hooksFile)
		fmt.Fprintf(&notes, "# Codex runs a hook only once it is trusted, and skips an untrusted one without a word. Trust it\n")
		fmt.Fprintf(&notes, "# by adding these lines to %s (they hold while the hook stays as printed,\n", filepath.Join(home, "config.toml"))
		fmt.Fprintf(&notes, "# the first PreToolUse group of the file):\n\n%s", trust)
		fmt.Fprintf(&notes, "# or by reviewing it in Codex's /hooks, or for one run (CI) with codex exec --dangerously-bypass-hook-trust.\n")
		fmt.Fprintf(&notes, "# Codex runs the call when its hook exits 1, prints what it cannot read, crashes or outlives its\n")
		fmt.Fprintf(&notes, "# \"timeout\", and ignores \"ask\": so this hook denies whenever hitl cannot decide, and\n")
		fmt.Fprintf(&notes, "# %s ends a minute before the hook's timeout (%d s).\n", f.waitText(), int(hookTimeout.Seconds()))
	case agents.Cursor:
		settings = agents.NewCursorSettings(f.command(a), f.wait())
		fmt.Fprintf(&notes, "# Merge the JSON above into ~/.cursor/hooks.json (every project) or <project>/.cursor/hooks.json.\n")
		fmt.Fprintf(&notes, "# One command answers the three events. hitl was not run against Cursor (it is not in a package\n")
		fmt.Fprintf(&notes, "# registry): the shapes are from Cursor's documentation, and what Cursor does when its hook fails,\n")
		fmt.Fprintf(&notes, "# crashes or outlives \"timeout\" (seconds; not in every version's documentation) was not seen.\n")
		fmt.Fprintf(&notes, "# So this hook denies whenever hitl cannot decide, and %s\n", f.waitText())
		fmt.Fprintf(&notes, "# ends a minute before the hook's timeout (%d s). Cursor cannot run an edited call: an edit\n", int(hookTimeout.Seconds()))
		fmt.Fprintf(&notes, "# in hitl denies it, with the edited input in the reason. beforeReadFile's content is never sent to hitl.\n")
	case agents.Copilot:
		settings = agents.NewCopilotSettings(f.command(a), f.matcher, f.wait())
		fmt.Fprintf(&notes, "# Merge the JSON above into $COPILOT_HOME/settings.json (~/.copilot/settings.json).\n")
		fmt.Fprintf(&notes, "# Copilot CLI runs the call when its hook prints what it cannot read or outlives its \"timeoutSec\"\n")
		fmt.Fprintf(&notes, "# (any other failure denies it): so this hook denies whenever hitl cannot decide, and\n")
		fmt.Fprintf(&notes, "# %s ends a minute before the hook's timeout (%d s). The matcher must match a whole\n", f.waitText(), int(hookTimeout.Seconds()))
		fmt.Fprintf(&notes, "# tool name, without parentheses or a closing $. An allow from hitl runs the call even where\n")
		fmt.Fprintf(&notes, "# --deny-tool names it, and headless without --allow-all-tools.\n")
	default:
		server := defaultServerURL
		if f.serverSet {
			server = f.server
		}
		settings = agents.GeminiSettings(f.command(a), f.matcher, server, f.wait())
		fmt.Fprintf(&notes, "# Merge the JSON above into ~/.gemini/settings.json.\n")
		fmt.Fprintf(&notes, "# Gemini CLI runs the call when its hook exits 1, prints what it cannot read, crashes or outlives\n")
		fmt.Fprintf(&notes, "# its \"timeout\" (milliseconds): so this hook denies whenever hitl cannot decide, and\n")
		fmt.Fprintf(&notes, "# %s ends a minute before the hook's timeout (%d ms).\n", f.waitText(), hookTimeout.Milliseconds())
		fmt.Fprintf(&notes, "# \"env\" hands the hook HITL_URL and HITL_TOKEN from the CLI's environment, which a GitHub Actions\n")
		fmt.Fprintf(&notes, "# runner (GITHUB_SHA set) would otherwise strip. Headless (-p), run_shell_command is offered only\n")
		fmt.Fprintf(&notes, "# in --approval-mode yolo, where this hook is the only gate.\n")
		if f.onError == string(tools.OnErrorAsk) {
			fmt.Fprintf(&notes, "# --on-error ask: a headless run (-p) ends at once, without running the call, when hitl cannot decide.\n")
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(settings); err != nil {
		return err
	}
	if _, err := stdout.Write(buf.Bytes()); err != nil {
		return err
	}
	_, err := io.WriteString(stderr, notes.String())
	return err
}
