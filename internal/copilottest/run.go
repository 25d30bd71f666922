package copilottest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/hitl-sh/hitl/internal/agenttest"
	"github.com/hitl-sh/hitl/internal/chatfake"
)

// Version is the Copilot CLI version test.sh installs and the fixtures in
// testdata were confirmed against.
const Version = "1.0.102"

// RequireEnv is the environment variable that, set to 1, makes a missing
// Copilot CLI fail the test instead of skipping it (test.sh sets it).
const RequireEnv = "HITL_TEST_REQUIRE_COPILOT"

// Model is the model the CLI is told to use (COPILOT_MODEL), one it knows,
// so that it offers its usual tools.
const Model = "gpt-4.1"

// APIKey is the provider key the CLI sends the fake. Copilot CLI masks a
// secret's value wherever it prints it, so the key is one no test output
// holds.
const APIKey = "hitl-copilottest-key"

// targets maps GOOS/GOARCH to the npm package holding the native binary.
var targets = map[string]string{
	"linux/amd64":  "copilot-linux-x64",
	"linux/arm64":  "copilot-linux-arm64",
	"darwin/amd64": "copilot-darwin-x64",
	"darwin/arm64": "copilot-darwin-arm64",
}

// Binary returns the path of the native Copilot CLI binary test.sh
// installs into this package's testdata (the npm package's npm-loader.js
// only executes it), or "" when it is not there.
func Binary() string {
	_, file, _, ok := runtime.Caller(0)
	pkg, known := targets[runtime.GOOS+"/"+runtime.GOARCH]
	if !ok || !known {
		return ""
	}
	return agenttest.Installed(file, "@github", pkg, "copilot")
}

// RequireBinary returns the Copilot CLI binary's path. When it is missing
// it skips the test, or fails it if HITL_TEST_REQUIRE_COPILOT is 1.
func RequireBinary(t testing.TB) string {
	t.Helper()
	return agenttest.Require(t, Binary(), RequireEnv, "Copilot CLI is not installed in internal/copilottest/testdata/node_modules (./test.sh installs @github/copilot@"+Version+")")
}

// NewAPI starts a fake Chat Completions API playing turns (see
// package chatfake) for the CLI to talk to.
func NewAPI(t testing.TB, turns ...chatfake.Turn) *chatfake.API {
	t.Helper()
	return chatfake.New(t, Model, turns...)
}

// Options configures Run.
type Options struct {
	// API is the fake API the CLI talks to; required.
	API *chatfake.API
	// Prompt is the user prompt, passed to -p.
	Prompt string
	// Settings, if not nil, is written to $COPILOT_HOME/settings.json, the
	// user's settings (see Hooks).
	Settings map[string]any
	// MCPServers, if not nil, is written to $COPILOT_HOME/mcp-config.json
	// as its "mcpServers".
	MCPServers map[string]any
	// Args are further arguments; nil means --allow-all-tools, without
	// which a headless run denies every tool that asks.
	Args []string
	// Env holds further environment variables, "NAME=value".
	Env []string
	// Files are written into the working directory before the run, by
	// path relative to it.
	Files map[string]string
	// Timeout bounds the run; 0 means two minutes.
	Timeout time.Duration
	// Dir, if not "", is the working directory (made if missing), for a
	// test whose model names absolute paths; "" means a new temporary
	// directory.
	Dir string
}

// Output is what a finished run of the CLI left.
type Output struct {
	// Dir is the working directory; Home is HOME (COPILOT_HOME is
	// Home/.copilot).
	Dir, Home string
	// Stdout and Stderr are the CLI's output; stdout is JSON lines
	// (--output-format json).
	Stdout, Stderr []byte
	// ExitCode is the CLI's exit status.
	ExitCode int
}

// Events decodes stdout's JSON lines.
func (r *Output) Events() []map[string]any {
	return agenttest.JSONLines(r.Stdout)
}

// SessionID returns the session id of the run's result event, "" when
// there is none.
func (r *Output) SessionID() string {
	for _, ev := range r.Events() {
		if ev["type"] == "result" {
			id, _ := ev["sessionId"].(string)
			return id
		}
	}
	return ""
}

// Run writes a temporary HOME with the user's settings and MCP servers,
// and runs copilot -p in a temporary working directory against opts.API,
// offline, until it exits. The CLI and what it started (hooks, MCP
// servers) are killed, as a process group, when it outlives opts.Timeout,
// which fails the test.
func Run(t testing.TB, opts Options) *Output {
	t.Helper()
	bin := RequireBinary(t)
	if opts.API == nil {
		t.Fatal("copilottest.Run: Options.API is required")
	}
	root := t.TempDir()
	out := &Output{Dir: filepath.Join(root, "work"), Home: filepath.Join(root, "home")}
	if opts.Dir != "" {
		out.Dir = opts.Dir
	}
	for path, content := range opts.Files {
		agenttest.WriteFile(t, filepath.Join(out.Dir, path), []byte(content))
	}
	agenttest.Mkdir(t, out.Dir)
	agenttest.Mkdir(t, filepath.Join(out.Home, ".copilot"))
	if opts.Settings != nil {
		agenttest.WriteJSONFile(t, filepath.Join(out.Home, ".copilot", "settings.json"), opts.Settings)
	}
	if opts.MCPServers != nil {
		agenttest.WriteJSONFile(t, filepath.Join(out.Home, ".copilot", "mcp-config.json"), map[string]any{"mcpServers": opts.MCPServers})
	}
	args := opts.Args
	if args == nil {
		args = []string{"--allow-all-tools"}
	}
	args = append([]string{"-p", opts.Prompt, "--output-format", "json", "--no-auto-update", "--no-ask-user"}, args...)

	ran := agenttest.Run(t, agenttest.Command{
		Name:    "copilot",
		Path:    bin,
		Args:    args,
		Dir:     out.Dir,
		Env:     append(Env(opts.API.URL, out.Home, cacheDir(bin)), opts.Env...),
		Timeout: opts.Timeout,
	})
	out.Stdout, out.Stderr, out.ExitCode = ran.Stdout, ran.Stderr, ran.ExitCode
	return out
}

// cacheDir is the XDG cache directory the runs share: the binary unpacks
// its JavaScript (60 MB) there once, not once a run. It is beside the
// installed CLI, so git-ignored with it.
func cacheDir(bin string) string {
	return filepath.Join(filepath.Dir(bin), "..", "..", ".hitl-xdg-cache")
}

// Env returns the environment the CLI runs in: offline (COPILOT_OFFLINE),
// with the fake API at baseURL as its OpenAI-compatible provider, HOME,
// COPILOT_HOME (home/.copilot), the shared cache, PATH and TMPDIR.
func Env(baseURL, home, cache string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"COPILOT_HOME=" + filepath.Join(home, ".copilot"),
		"XDG_CACHE_HOME=" + cache,
		"TMPDIR=" + os.TempDir(),
		"COPILOT_OFFLINE=true",
		"COPILOT_PROVIDER_BASE_URL=" + baseURL + "/v1",
		"COPILOT_PROVIDER_API_KEY=" + APIKey,
		"COPILOT_MODEL=" + Model,
	}
}

// Hooks returns settings that run hook (see CommandHookConfig) on event
// (preToolUse, postToolUse, …), for the tools whose name the regular
// expression matcher fully matches when it is not "".
func Hooks(event, matcher string, hook map[string]any) map[string]any {
	if matcher != "" {
		hook = clone(hook)
		hook["matcher"] = matcher
	}
	return map[string]any{"hooks": map[string]any{event: []any{hook}}}
}

// CommandHookConfig returns a "type": "command" hook object running the
// bash command line command, with a timeout in seconds (timeoutSec) when
// timeout is above 0.
func CommandHookConfig(command string, timeout int) map[string]any {
	m := map[string]any{"type": "command", "bash": command}
	if timeout > 0 {
		m["timeoutSec"] = timeout
	}
	return m
}

func clone(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// Bash returns a turn in which the model runs command with Copilot CLI's
// shell tool, bash.
func Bash(command string) chatfake.Turn {
	return chatfake.Call("bash", map[string]any{"command": command, "description": "Run " + command})
}
