package clinetest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/hitl-sh/hitl/internal/agenttest"
	"github.com/hitl-sh/hitl/internal/chatfake"
)

// Version is the Cline CLI version test.sh installs.
const Version = "3.0.65"

// RequireEnv is the environment variable that, set to 1, makes a missing
// Cline fail the test instead of skipping it (test.sh sets it).
const RequireEnv = "HITL_TEST_REQUIRE_CLINE"

// Model is the fake API's model, configured as Cline's openai-compatible
// provider.
const Model = "fake-model"

// targets maps GOOS/GOARCH to the npm package holding the native binary.
var targets = map[string]string{
	"linux/amd64":  "cli-linux-x64",
	"linux/arm64":  "cli-linux-arm64",
	"darwin/amd64": "cli-darwin-x64",
	"darwin/arm64": "cli-darwin-arm64",
}

// Binary returns the path of the native Cline binary test.sh installs
// into this package's testdata, or "" when it is not there.
func Binary() string {
	_, file, _, ok := runtime.Caller(0)
	pkg, known := targets[runtime.GOOS+"/"+runtime.GOARCH]
	if !ok || !known {
		return ""
	}
	return agenttest.Installed(file, "@cline", pkg, "bin", "cline")
}

// RequireBinary returns the Cline binary's path. When it is missing it
// skips the test, or fails it if HITL_TEST_REQUIRE_CLINE is 1.
func RequireBinary(t testing.TB) string {
	t.Helper()
	return agenttest.Require(t, Binary(), RequireEnv, "Cline is not installed in internal/clinetest/testdata/node_modules (./test.sh installs cline@"+Version+")")
}

// NewAPI starts a fake Chat Completions API playing turns (see package
// chatfake) for Cline to talk to.
func NewAPI(t testing.TB, turns ...chatfake.Turn) *chatfake.API {
	t.Helper()
	return chatfake.New(t, Model, turns...)
}

// RunCommand returns a turn in which the model runs command with Cline's
// shell tool, run_commands.
func RunCommand(command string) chatfake.Turn {
	return chatfake.Call("run_commands", map[string]any{"commands": []string{command}})
}

// Options configures Run.
type Options struct {
	// API is the fake API Cline talks to; required.
	API *chatfake.API
	// Prompt is the task.
	Prompt string
	// Hook, if not "", is written to ~/.cline/hooks/PreToolUse, executable:
	// Cline runs it before every tool call.
	Hook string
	// Env holds further environment variables, "NAME=value".
	Env []string
	// Timeout bounds the run; 0 means 90 seconds.
	Timeout time.Duration
}

// Output is what a finished run of Cline left.
type Output struct {
	// Dir is the working directory; Home is HOME.
	Dir, Home string
	// Stdout and Stderr are Cline's output; stdout is JSON lines (--json).
	Stdout, Stderr []byte
	// ExitCode is Cline's exit status.
	ExitCode int
}

// Events decodes stdout's JSON lines.
func (r *Output) Events() []map[string]any { return agenttest.JSONLines(r.Stdout) }

// Finish returns the run's finishReason ("completed", "aborted"), "" when
// it reported none.
func (r *Output) Finish() string {
	for _, ev := range r.Events() {
		if ev["type"] == "run_result" {
			s, _ := ev["finishReason"].(string)
			return s
		}
	}
	return ""
}

// Run writes a temporary HOME with Cline's provider (the fake API, through
// cline auth) and the hook file, and runs cline --json with the prompt in
// a temporary working directory until it exits. Cline and what it started
// are killed, as a process group, when it outlives opts.Timeout, which
// fails the test.
func Run(t testing.TB, opts Options) *Output {
	t.Helper()
	bin := RequireBinary(t)
	if opts.API == nil {
		t.Fatal("clinetest.Run: Options.API is required")
	}
	root := t.TempDir()
	out := &Output{Dir: filepath.Join(root, "work"), Home: filepath.Join(root, "home")}
	agenttest.Mkdir(t, out.Dir)
	if opts.Hook != "" {
		hook := filepath.Join(out.Home, ".cline", "hooks", "PreToolUse")
		agenttest.WriteFile(t, hook, []byte(opts.Hook))
		if err := os.Chmod(hook, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 90 * time.Second
	}
	env := append(Env(out.Home), opts.Env...)
	auth := agenttest.Run(t, agenttest.Command{
		Name: "cline auth", Path: bin, Dir: out.Dir, Env: env, Timeout: timeout,
		Args: []string{"auth", "-p", "openai-compatible", "-k", "hitl-clinetest-key", "-m", Model, "-b", opts.API.URL + "/v1"},
	})
	if auth.ExitCode != 0 {
		t.Fatalf("cline auth exited %d:\n%s\n%s", auth.ExitCode, auth.Stdout, auth.Stderr)
	}
	ran := agenttest.Run(t, agenttest.Command{
		Name: "cline", Path: bin, Dir: out.Dir, Env: env, Timeout: timeout,
		Args: []string{"--json", "-c", out.Dir, opts.Prompt},
	})
	out.Stdout, out.Stderr, out.ExitCode = ran.Stdout, ran.Stderr, ran.ExitCode
	return out
}

// Env returns the environment Cline runs in: HOME, PATH and TMPDIR, and
// the session backend "local", so that each Cline runs its task in its
// own process. By default Cline hands tasks to a hub daemon on a fixed
// port, which the first Cline of the machine starts with its HOME and
// working directory and which outlives it: parallel tests would share one
// (with another test's HOME), and it would outlive the test.
func Env(home string) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + os.TempDir(), "CLINE_SESSION_BACKEND_MODE=local"}
}
