package opencodetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/hitl-sh/hitl/internal/agenttest"
	"github.com/hitl-sh/hitl/internal/chatfake"
)

// Version is the OpenCode version test.sh installs and the fixtures in
// testdata were confirmed against.
const Version = "1.18.33"

// RequireEnv is the environment variable that, set to 1, makes a missing
// OpenCode fail the test instead of skipping it (test.sh sets it).
const RequireEnv = "HITL_TEST_REQUIRE_OPENCODE"

// Provider and Model name the fake API in OpenCode's configuration: the
// model is Provider/Model.
const (
	Provider = "hitltest"
	Model    = "fake-model"
)

// targets maps GOOS/GOARCH to the npm package holding the native binary.
var targets = map[string]string{
	"linux/amd64":  "opencode-linux-x64",
	"linux/arm64":  "opencode-linux-arm64",
	"darwin/amd64": "opencode-darwin-x64",
	"darwin/arm64": "opencode-darwin-arm64",
}

// Binary returns the path of the native OpenCode binary test.sh installs
// into this package's testdata, or "" when it is not there.
func Binary() string {
	_, file, _, ok := runtime.Caller(0)
	pkg, known := targets[runtime.GOOS+"/"+runtime.GOARCH]
	if !ok || !known {
		return ""
	}
	return agenttest.Installed(file, pkg, "bin", "opencode")
}

// RequireBinary returns the OpenCode binary's path. When it is missing it
// skips the test, or fails it if HITL_TEST_REQUIRE_OPENCODE is 1.
func RequireBinary(t testing.TB) string {
	t.Helper()
	return agenttest.Require(t, Binary(), RequireEnv, "OpenCode is not installed in internal/opencodetest/testdata/node_modules (./test.sh installs opencode-ai@"+Version+")")
}

// NewAPI starts a fake Chat Completions API playing turns (see package
// chatfake) for OpenCode to talk to.
func NewAPI(t testing.TB, turns ...chatfake.Turn) *chatfake.API {
	t.Helper()
	return chatfake.New(t, Model, turns...)
}

// Bash returns a turn in which the model runs command with OpenCode's
// shell tool, bash.
func Bash(command string) chatfake.Turn {
	return chatfake.Call("bash", map[string]any{"command": command, "description": "Run " + command})
}

// Options configures Run.
type Options struct {
	// API is the fake API OpenCode talks to; required.
	API *chatfake.API
	// Prompt is the user message.
	Prompt string
	// Config, if not nil, is merged over Config(API) (key by key, at the
	// top level) and written to $XDG_CONFIG_HOME/opencode/opencode.json.
	Config map[string]any
	// Plugins are written to $XDG_CONFIG_HOME/opencode/plugin/, by file
	// name: OpenCode loads each.
	Plugins map[string]string
	// Args are further arguments to opencode run, before the prompt.
	Args []string
	// Env holds further environment variables, "NAME=value".
	Env []string
	// Files are written into the working directory before the run, by
	// path relative to it.
	Files map[string]string
	// Dir, if not "", is the working directory (made if missing); ""
	// means a new temporary directory.
	Dir string
	// Timeout bounds the run; 0 means two minutes.
	Timeout time.Duration
}

// Output is what a finished run of OpenCode left.
type Output struct {
	// Dir is the working directory; Home is HOME.
	Dir, Home string
	// Stdout and Stderr are OpenCode's output; stdout is JSON lines
	// (--format json).
	Stdout, Stderr []byte
	// ExitCode is OpenCode's exit status.
	ExitCode int
}

// Events decodes stdout's JSON lines.
func (r *Output) Events() []map[string]any {
	return agenttest.JSONLines(r.Stdout)
}

// SessionID returns the session id of the run's events, "" when there
// are none.
func (r *Output) SessionID() string {
	for _, ev := range r.Events() {
		if id, ok := ev["sessionID"].(string); ok {
			return id
		}
	}
	return ""
}

// Run writes a temporary HOME (and XDG directories) with OpenCode's
// configuration and plugins, and runs opencode run in a temporary working
// directory against opts.API until it exits. OpenCode and what it started
// (plugins' children, MCP servers) are killed, as a process group, when
// it outlives opts.Timeout, which fails the test.
func Run(t testing.TB, opts Options) *Output {
	t.Helper()
	bin := RequireBinary(t)
	if opts.API == nil {
		t.Fatal("opencodetest.Run: Options.API is required")
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
	config := Config(opts.API.URL)
	for k, v := range opts.Config {
		config[k] = v
	}
	cfgDir := filepath.Join(out.Home, ".config", "opencode")
	agenttest.WriteJSONFile(t, filepath.Join(cfgDir, "opencode.json"), config)
	for name, src := range opts.Plugins {
		agenttest.WriteFile(t, filepath.Join(cfgDir, "plugin", name), []byte(src))
	}
	args := append(append([]string{"run", "--format", "json", "-m", Provider + "/" + Model}, opts.Args...), opts.Prompt)

	ran := agenttest.Run(t, agenttest.Command{
		Name:    "opencode",
		Path:    bin,
		Args:    args,
		Dir:     out.Dir,
		Env:     append(Env(out.Home), opts.Env...),
		Timeout: opts.Timeout,
	})
	out.Stdout, out.Stderr, out.ExitCode = ran.Stdout, ran.Stderr, ran.ExitCode
	return out
}

// Config returns the configuration that points OpenCode at the fake API
// at baseURL, an OpenAI-compatible provider (Provider, with the one model
// Model), without updates or sharing.
func Config(baseURL string) map[string]any {
	return map[string]any{
		"$schema":    "https://opencode.ai/config.json",
		"autoupdate": false,
		"share":      "disabled",
		"model":      Provider + "/" + Model,
		"provider": map[string]any{Provider: map[string]any{
			"npm":     "@ai-sdk/openai-compatible",
			"name":    "hitl test",
			"options": map[string]any{"baseURL": baseURL + "/v1", "apiKey": "hitl-opencodetest-key"},
			"models":  map[string]any{Model: map[string]any{"name": "Fake model", "tool_call": true}},
		}},
	}
}

// Env returns the environment OpenCode runs in: HOME and the XDG
// directories under home, npm offline (or OpenCode spends a minute
// retrying to install a plugin), PATH and TMPDIR.
func Env(home string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"TMPDIR=" + os.TempDir(),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"npm_config_offline=true",
		"OPENCODE_DISABLE_AUTOUPDATE=true",
	}
}

// jsString quotes s as a JavaScript string.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
