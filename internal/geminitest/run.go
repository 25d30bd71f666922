package geminitest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/hitl-sh/hitl/internal/agenttest"
)

// Version is the Gemini CLI version test.sh installs and the fixtures in
// testdata were confirmed against.
const Version = "0.61.0"

// RequireEnv is the environment variable that, set to 1, makes a missing
// Gemini CLI fail the test instead of skipping it (test.sh sets it).
const RequireEnv = "HITL_TEST_REQUIRE_GEMINI"

// Binary returns the path of the Gemini CLI script (bundle/gemini.js, run
// by node) test.sh installs into this package's testdata, or "" when it is
// not there.
func Binary() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	return agenttest.Installed(file, "@google", "gemini-cli", "bundle", "gemini.js")
}

// RequireBinary returns the Gemini CLI's path. When it (or node) is
// missing it skips the test, or fails it if HITL_TEST_REQUIRE_GEMINI is 1.
func RequireBinary(t testing.TB) string {
	t.Helper()
	bin := Binary()
	_, noNode := exec.LookPath("node")
	if bin != "" && noNode == nil {
		return bin
	}
	agenttest.Missing(t, RequireEnv, "Gemini CLI is not installed in internal/geminitest/testdata/node_modules, or node is not on PATH (./test.sh installs @google/gemini-cli@"+Version+")")
	return ""
}

// Options configures Run.
type Options struct {
	// API is the fake Gemini API the CLI talks to; required.
	API *API
	// Prompt is the user prompt, passed to -p.
	Prompt string
	// Settings, if not nil, is merged over BaseSettings (key by key, at the
	// top level) and written to $HOME/.gemini/settings.json, the user's
	// settings: hooks there run without a trust prompt.
	Settings map[string]any
	// ApprovalMode is passed to --approval-mode; "" means "yolo", in which
	// the CLI runs every tool without asking.
	ApprovalMode string
	// Args are further arguments.
	Args []string
	// Env holds further environment variables, "NAME=value".
	Env []string
	// Files are written into the working directory before the run, by
	// path relative to it.
	Files map[string]string
	// Timeout bounds the run; 0 means two minutes.
	Timeout time.Duration
}

// Output is what a finished run of the CLI left.
type Output struct {
	// Dir is the working directory; Home is HOME.
	Dir, Home string
	// Stdout and Stderr are the CLI's output.
	Stdout, Stderr []byte
	// ExitCode is the CLI's exit status.
	ExitCode int
	// Result is stdout decoded (-o json); nil if it is not JSON.
	Result *Result
}

// Result is the part of the JSON object gemini -p -o json prints that
// tests read.
type Result struct {
	// SessionID is the session's id, as hooks are given it.
	SessionID string `json:"session_id"`
	// Response is the model's final text.
	Response string `json:"response"`
	// Error is set when the run failed.
	Error json.RawMessage `json:"error"`
	// Stats counts requests, tokens and tool calls.
	Stats json.RawMessage `json:"stats"`
}

// Run writes a temporary HOME with the user's settings (BaseSettings and
// opts.Settings), and runs gemini -p in a temporary working directory
// against opts.API until it exits. The CLI and what it started (hooks, MCP
// servers) are killed, as a process group, when it outlives opts.Timeout,
// which fails the test.
func Run(t testing.TB, opts Options) *Output {
	t.Helper()
	bin := RequireBinary(t)
	if opts.API == nil {
		t.Fatal("geminitest.Run: Options.API is required")
	}
	root := t.TempDir()
	out := &Output{Dir: filepath.Join(root, "work"), Home: filepath.Join(root, "home")}
	for path, content := range opts.Files {
		agenttest.WriteFile(t, filepath.Join(out.Dir, path), []byte(content))
	}
	agenttest.Mkdir(t, out.Dir)
	settings := BaseSettings()
	for k, v := range opts.Settings {
		settings[k] = v
	}
	agenttest.WriteJSONFile(t, filepath.Join(out.Home, ".gemini", "settings.json"), settings)
	mode := opts.ApprovalMode
	if mode == "" {
		mode = "yolo"
	}
	// --skip-trust: a headless run in a folder not trusted stops at once,
	// and in one trusted only for the run the approval mode holds.
	args := append([]string{bin, "-p", opts.Prompt, "-m", Model, "-o", "json", "--skip-trust", "--approval-mode", mode}, opts.Args...)

	ran := agenttest.Run(t, agenttest.Command{
		Name:    "gemini",
		Path:    "node",
		Args:    args,
		Dir:     out.Dir,
		Env:     append(Env(opts.API.URL, out.Home), opts.Env...),
		Timeout: opts.Timeout,
	})
	out.Stdout, out.Stderr, out.ExitCode = ran.Stdout, ran.Stderr, ran.ExitCode
	var res Result
	if json.Unmarshal(bytes.TrimSpace(out.Stdout), &res) == nil {
		out.Result = &res
	}
	return out
}

// BaseSettings returns the user settings every run starts from: an API
// key for authentication, and no usage statistics, telemetry or update
// checks.
func BaseSettings() map[string]any {
	return map[string]any{
		"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"general":   map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
	}
}

// Env returns the environment the CLI runs in: the fake API at baseURL
// (GOOGLE_GEMINI_BASE_URL), a test key, HOME, PATH and TMPDIR, and no
// relaunch of itself with a larger heap.
func Env(baseURL, home string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"TMPDIR=" + os.TempDir(),
		"GOOGLE_GEMINI_BASE_URL=" + baseURL,
		"GEMINI_API_KEY=test",
		"GEMINI_CLI_NO_RELAUNCH=true",
	}
}

// Hooks returns settings that run hook (see CommandHookConfig) on event
// (BeforeTool, AfterTool, …) for tools whose name matches the regular
// expression matcher.
func Hooks(event, matcher string, hook any) map[string]any {
	return map[string]any{
		"hooks": map[string]any{
			event: []any{map[string]any{"matcher": matcher, "hooks": []any{hook}}},
		},
	}
}

// CommandHookConfig returns a "type": "command" hook object running the
// shell command line command, with a timeout in milliseconds when
// timeoutMS is above 0 (the CLI's default is 60,000).
func CommandHookConfig(command string, timeoutMS int) map[string]any {
	m := map[string]any{"type": "command", "command": command}
	if timeoutMS > 0 {
		m["timeout"] = timeoutMS
	}
	return m
}
