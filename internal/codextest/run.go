package codextest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/hitl-sh/hitl/agents"
	"github.com/hitl-sh/hitl/internal/agenttest"
)

// Version is the Codex version test.sh installs and the fixtures in
// testdata were confirmed against.
const Version = "0.169.0"

// RequireEnv is the environment variable that, set to 1, makes a missing
// Codex binary fail the test instead of skipping it (test.sh sets it).
const RequireEnv = "HITL_TEST_REQUIRE_CODEX"

// keyEnv names the environment variable that holds the fake API's key;
// the model provider's env_key.
const keyEnv = "HITL_CODEXTEST_API_KEY"

// targets maps GOOS/GOARCH to the npm package holding Codex's native
// binary and the target triple it is built for.
var targets = map[string][2]string{
	"linux/amd64":  {"codex-linux-x64", "x86_64-unknown-linux-musl"},
	"linux/arm64":  {"codex-linux-arm64", "aarch64-unknown-linux-musl"},
	"darwin/amd64": {"codex-darwin-x64", "x86_64-apple-darwin"},
	"darwin/arm64": {"codex-darwin-arm64", "aarch64-apple-darwin"},
}

// Binary returns the path of the native Codex binary test.sh installs
// into this package's testdata (the npm package's bin/codex.js only
// executes it), or "" when it is not there.
func Binary() string {
	_, file, _, ok := runtime.Caller(0)
	target, known := targets[runtime.GOOS+"/"+runtime.GOARCH]
	if !ok || !known {
		return ""
	}
	return agenttest.Installed(file, "@openai", target[0], "vendor", target[1], "bin", "codex")
}

// RequireBinary returns the Codex binary's path. When it is missing it
// skips the test, or fails it if HITL_TEST_REQUIRE_CODEX is 1.
func RequireBinary(t testing.TB) string {
	t.Helper()
	return agenttest.Require(t, Binary(), RequireEnv, "Codex is not installed in internal/codextest/testdata/node_modules (./test.sh installs @openai/codex@"+Version+")")
}

// Trust is how a run has Codex trust the hooks it is configured with.
// Codex skips, silently, a hook that is not trusted.
type Trust int

const (
	// BypassTrust passes --dangerously-bypass-hook-trust to codex exec:
	// every enabled hook runs.
	BypassTrust Trust = iota
	// StoredTrust records each hook's hash as trusted in config.toml
	// before the run through Codex's app server (TrustHooks), as accepting
	// it in Codex's UI does.
	StoredTrust
	// ComputedTrust writes each hook's trusted_hash into config.toml
	// before the run, computed without Codex (agents.CodexTrust, as hitl
	// hook codex --print-settings does).
	ComputedTrust
	// NoTrust leaves the hooks untrusted.
	NoTrust
)

// Options configures Run.
type Options struct {
	// API is the fake Responses API Codex talks to; required.
	API *API
	// Prompt is the user prompt.
	Prompt string
	// Hooks, if not nil, is marshalled to $CODEX_HOME/hooks.json (see
	// Hooks).
	Hooks any
	// Trust says how the hooks are trusted; the zero value bypasses trust.
	Trust Trust
	// Config is further TOML appended to $CODEX_HOME/config.toml (such as
	// [mcp_servers.x] tables).
	Config string
	// Args are further arguments to codex exec, before the prompt.
	Args []string
	// Env holds further environment variables, "NAME=value".
	Env []string
	// Files are written into the working directory before the run, by
	// path relative to it.
	Files map[string]string
	// Timeout bounds the run; 0 means two minutes.
	Timeout time.Duration
	// Home, if not "", is HOME and CODEX_HOME (made if missing), for a
	// test that prepares it, such as trusting hooks by hooks.json's path;
	// "" means a new temporary directory.
	Home string
}

// Output is what a finished run of codex exec left.
type Output struct {
	// Dir is the working directory; Home is HOME and CODEX_HOME.
	Dir, Home string
	// Stdout and Stderr are the CLI's output; stdout is JSON lines (--json).
	Stdout, Stderr []byte
	// ExitCode is the CLI's exit status.
	ExitCode int
}

// Events decodes stdout's JSON lines (thread.started, item.completed, …).
func (r *Output) Events() []map[string]any {
	return agenttest.JSONLines(r.Stdout)
}

// Run writes a temporary HOME (also CODEX_HOME) with config.toml pointing
// Codex at opts.API and the hooks, and runs codex exec in a temporary
// working directory until it exits. Codex and what it started (hooks, MCP
// servers) are killed, as a process group, when it outlives opts.Timeout,
// which fails the test.
func Run(t testing.TB, opts Options) *Output {
	t.Helper()
	bin := RequireBinary(t)
	if opts.API == nil {
		t.Fatal("codextest.Run: Options.API is required")
	}
	root := t.TempDir()
	out := &Output{Dir: filepath.Join(root, "work"), Home: filepath.Join(root, "home")}
	if opts.Home != "" {
		out.Home = opts.Home
	}
	for path, content := range opts.Files {
		agenttest.WriteFile(t, filepath.Join(out.Dir, path), []byte(content))
	}
	agenttest.Mkdir(t, out.Dir)
	config := Config(opts.API.URL) + opts.Config
	if opts.Hooks != nil {
		hooksFile := filepath.Join(out.Home, "hooks.json")
		agenttest.WriteJSONFile(t, hooksFile, opts.Hooks)
		if opts.Trust == ComputedTrust {
			trust, err := agents.CodexTrust(hooksFile, opts.Hooks)
			if err != nil {
				t.Fatal(err)
			}
			config += trust
		}
	}
	agenttest.WriteFile(t, filepath.Join(out.Home, "config.toml"), []byte(config))
	env := append(Env(out.Home), opts.Env...)
	if opts.Trust == StoredTrust {
		TrustHooks(t, out.Home, out.Dir, env)
	}
	args := []string{"exec", "--skip-git-repo-check", "--json", "--sandbox", "danger-full-access"}
	if opts.Trust == BypassTrust {
		args = append(args, "--dangerously-bypass-hook-trust")
	}
	args = append(append(args, opts.Args...), "--", opts.Prompt)

	ran := agenttest.Run(t, agenttest.Command{
		Name:    "codex",
		Path:    bin,
		Args:    args,
		Dir:     out.Dir,
		Env:     env,
		Timeout: opts.Timeout,
	})
	out.Stdout, out.Stderr, out.ExitCode = ran.Stdout, ran.Stderr, ran.ExitCode
	return out
}

// Config returns the config.toml that points Codex at the fake Responses
// API at baseURL: a model provider of its own (the key in the environment
// variable Env sets), Model, no update check, analytics or feedback, and
// one retry.
func Config(baseURL string) string {
	return fmt.Sprintf(`model = %s
model_provider = "hitltest"
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

[model_providers.hitltest]
name = "hitl test"
base_url = %s
wire_api = "responses"
env_key = %s
request_max_retries = 1
stream_max_retries = 1

`, strconv.Quote(Model), strconv.Quote(baseURL+"/v1"), strconv.Quote(keyEnv))
}

// Env returns the environment Codex runs in: HOME and CODEX_HOME home, the
// fake API's key, PATH and TMPDIR.
func Env(home string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"CODEX_HOME=" + home,
		"TMPDIR=" + os.TempDir(),
		keyEnv + "=test",
	}
}

// Hooks returns a hooks.json document that runs hook (see
// CommandHookConfig) on event (PreToolUse, PermissionRequest, …) for tools
// whose name matches the regular expression matcher.
func Hooks(event, matcher string, hook any) map[string]any {
	return map[string]any{
		"hooks": map[string]any{
			event: []any{map[string]any{"matcher": matcher, "hooks": []any{hook}}},
		},
	}
}

// CommandHookConfig returns a "type": "command" hook object running the
// shell command line command, with a timeout in seconds when timeout is
// above 0 (Codex's default is 600).
func CommandHookConfig(command string, timeout int) map[string]any {
	m := map[string]any{"type": "command", "command": command}
	if timeout > 0 {
		m["timeout"] = timeout
	}
	return m
}
