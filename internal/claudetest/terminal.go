package claudetest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hitl-sh/hitl/internal/agenttest"
)

// Terminal is an interactive Claude Code session in tmux: a test types
// into it and reads its screen, as a person at the terminal would.
type Terminal struct {
	t      testing.TB
	tmux   string
	socket string
	// Dir is the scratch working directory; Home is its HOME.
	Dir, Home string
}

// Channels are the feature flags Claude Code reads before it relays
// permission prompts to a channel (tengu_harbor: channels at all;
// tengu_harbor_permissions: the permission relay). Claude Code fetches
// them from Anthropic, which the tests cannot reach; StartTerminal writes
// them to HOME's flag cache, where a fetch would have left them, and sets
// CLAUDE_CODE_GB_DISK_CACHE_WHEN_TELEMETRY_OFF so that the cache is read
// with telemetry off.
var Channels = map[string]any{"tengu_harbor": true, "tengu_harbor_permissions": true}

// StartTerminal starts Claude Code interactively in tmux against opts.API,
// in a scratch directory and HOME like Start's, with opts.Args, Settings,
// MCPConfig, Env and Files (Prompt, Stream and Again are not used: type
// the prompt). Onboarding is done, the project trusted, the API key
// approved, and Flags (such as Channels) in the flag cache. The session
// is killed when the test ends. It skips the test when tmux is missing,
// or fails it with HITL_TEST_REQUIRE_CLAUDE=1.
func StartTerminal(t testing.TB, opts Options, flags map[string]any) *Terminal {
	t.Helper()
	bin := RequireBinary(t)
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("tmux is not installed; %s=1, so this fails", RequireEnv)
		}
		t.Skip("tmux is not installed")
	}
	if opts.API == nil {
		t.Fatal("claudetest.StartTerminal: Options.API is required")
	}
	root := t.TempDir()
	term := &Terminal{t: t, tmux: tmux, Dir: filepath.Join(root, "work"), Home: filepath.Join(root, "home")}
	for path, content := range opts.Files {
		agenttest.WriteFile(t, filepath.Join(term.Dir, path), []byte(content))
	}
	agenttest.Mkdir(t, term.Dir)
	config := map[string]any{
		"hasCompletedOnboarding": true,
		"theme":                  "dark",
		"customApiKeyResponses":  map[string]any{"approved": []string{"test"}, "rejected": []string{}},
		"projects":               map[string]any{term.Dir: map[string]any{"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}},
	}
	if flags != nil {
		config["cachedGrowthBookFeatures"] = flags
	}
	agenttest.WriteJSONFile(t, filepath.Join(term.Home, ".claude.json"), config)
	if opts.Settings != nil {
		agenttest.WriteJSONFile(t, filepath.Join(term.Dir, ".claude", "settings.json"), opts.Settings)
	}
	args := []string{bin}
	if opts.MCPConfig != nil {
		path := filepath.Join(term.Dir, ".mcp.json")
		agenttest.WriteJSONFile(t, path, opts.MCPConfig)
		args = append(args, "--mcp-config", path, "--strict-mcp-config")
	}
	args = append(args, opts.Args...)
	env := append(Env(opts.API.URL, term.Home), "TERM=xterm-256color", "CLAUDE_CODE_GB_DISK_CACHE_WHEN_TELEMETRY_OFF=1")
	env = append(env, opts.Env...)
	script := "#!/bin/sh\ncd " + agenttest.ShellQuote(term.Dir) + " || exit 1\nexec env -i"
	for _, kv := range env {
		script += " " + agenttest.ShellQuote(kv)
	}
	for _, a := range args {
		script += " " + agenttest.ShellQuote(a)
	}
	launch := filepath.Join(root, "claude.sh")
	if err := os.WriteFile(launch, []byte(script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A socket of its own, in a short path (sockets' paths are bounded).
	sockDir, err := os.MkdirTemp("", "ct")
	if err != nil {
		t.Fatal(err)
	}
	term.socket = filepath.Join(sockDir, "s")
	t.Cleanup(func() {
		exec.Command(tmux, "-S", term.socket, "kill-server").Run()
		os.RemoveAll(sockDir)
	})
	term.run("new-session", "-d", "-s", "claude", "-x", "200", "-y", "50", launch)
	if pid, err := strconv.Atoi(strings.TrimSpace(term.run("display-message", "-p", "-t", "claude", "#{pane_pid}"))); err == nil {
		// Registered after t.TempDir, so it runs before its removal: Claude
		// Code writes to HOME while it shuts down.
		t.Cleanup(func() { awaitExit(pid) })
	}
	return term
}

// awaitExit waits a few seconds for process pid to exit (or be a zombie),
// then kills it. Where /proc is missing it only kills it.
func awaitExit(pid int) {
	for range 100 {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		if i := bytes.LastIndexByte(b, ')'); i > 0 && len(b) > i+2 && b[i+2] == 'Z' {
			return
		}
		time.Sleep(100 * time.Millisecond) // no event tells when another process exits
	}
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

// run runs a tmux command against the terminal's server.
func (term *Terminal) run(args ...string) string {
	term.t.Helper()
	out, err := exec.Command(term.tmux, append([]string{"-S", term.socket}, args...)...).CombinedOutput()
	if err != nil {
		term.t.Fatalf("tmux %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Type types text, without pressing Enter.
func (term *Terminal) Type(text string) {
	term.t.Helper()
	term.run("send-keys", "-t", "claude", "-l", text)
}

// Press presses keys by tmux's names: "Enter", "Escape", "C-c".
func (term *Terminal) Press(keys ...string) {
	term.t.Helper()
	term.run(append([]string{"send-keys", "-t", "claude"}, keys...)...)
}

// PressUntilGone presses keys until the screen no longer shows text: a
// dialog Claude Code has just drawn may not take keys yet.
func (term *Terminal) PressUntilGone(text string, keys ...string) {
	term.t.Helper()
	for range 20 {
		term.Press(keys...)
		for range 20 {
			if !strings.Contains(term.Screen(), text) {
				return
			}
			time.Sleep(100 * time.Millisecond) // the screen has no event to wait on
		}
	}
	term.t.Fatalf("the screen still shows %s after pressing %v; the screen:\n%s", text, keys, term.Screen())
}

// Screen returns what the terminal shows.
func (term *Terminal) Screen() string {
	term.t.Helper()
	return term.run("capture-pane", "-p", "-t", "claude")
}

// WaitFor waits until the screen shows text, failing the test (with the
// screen) after a generous bound.
func (term *Terminal) WaitFor(text string) {
	term.t.Helper()
	term.waitUntil("the screen to show "+text, func(screen string) bool { return strings.Contains(screen, text) })
}

// WaitGone waits until the screen no longer shows text.
func (term *Terminal) WaitGone(text string) {
	term.t.Helper()
	term.waitUntil("the screen to stop showing "+text, func(screen string) bool { return !strings.Contains(screen, text) })
}

func (term *Terminal) waitUntil(what string, cond func(screen string) bool) {
	term.t.Helper()
	deadline := time.Now().Add(90 * time.Second) // Claude Code starts in seconds, on a busy machine in tens
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var screen string
	for time.Now().Before(deadline) {
		if screen = term.Screen(); cond(screen) {
			return
		}
		<-tick.C
	}
	term.t.Fatalf("timed out waiting for %s; the screen:\n%s", what, screen)
}

// WaitExit waits until Claude Code has exited (the tmux session goes with
// it).
func (term *Terminal) WaitExit() {
	term.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for exec.Command(term.tmux, "-S", term.socket, "has-session", "-t", "claude").Run() == nil {
		if time.Now().After(deadline) {
			term.t.Fatalf("Claude Code has not exited; the screen:\n%s", term.Screen())
		}
		time.Sleep(100 * time.Millisecond) // tmux has no event to wait on
	}
}
