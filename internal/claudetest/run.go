package claudetest

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/hitl-sh/hitl/internal/agenttest"
)

// Version is the Claude Code version test.sh installs and the fixtures in
// testdata were confirmed against.
const Version = "2.1.332"

// RequireEnv is the environment variable that, set to 1, makes a missing
// Claude Code binary fail the test instead of skipping it (test.sh sets it).
const RequireEnv = "HITL_TEST_REQUIRE_CLAUDE"

// Binary returns the path of the Claude Code binary test.sh installs into
// this package's testdata, or "" when it is not there.
func Binary() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	return agenttest.Installed(file, "@anthropic-ai", "claude-code", "bin", "claude.exe")
}

// RequireBinary returns the Claude Code binary's path. When it is missing it
// skips the test, or fails it if HITL_TEST_REQUIRE_CLAUDE is 1.
func RequireBinary(t testing.TB) string {
	t.Helper()
	return agenttest.Require(t, Binary(), RequireEnv, "Claude Code is not installed in internal/claudetest/testdata/node_modules (./test.sh installs @anthropic-ai/claude-code@"+Version+")")
}

// Options configures Start and Run.
type Options struct {
	// API is the fake Messages API the CLI talks to; required.
	API *API
	// Prompt is the user prompt: passed to -p, or sent as the first user
	// message with Stream.
	Prompt string
	// Settings, if not nil, is marshalled to the scratch directory's
	// .claude/settings.json (hooks, permissions, …).
	Settings any
	// MCPConfig, if not nil, is marshalled to .mcp.json in the scratch
	// directory and passed with --mcp-config and --strict-mcp-config.
	MCPConfig any
	// Args are further arguments, after -p and the output format.
	Args []string
	// Stream runs the CLI as the Agent SDK does: --input-format stream-json
	// and --output-format stream-json (with --verbose). Process.Send writes
	// to its standard input, which stays open until Process.CloseStdin;
	// Process.Next reads its output. Without Stream the output format is
	// json and standard input is empty.
	Stream bool
	// Env holds further environment variables, "NAME=value".
	Env []string
	// Files are written into the scratch directory before the run, by path
	// relative to it.
	Files map[string]string
	// Timeout bounds the run; 0 means two minutes.
	Timeout time.Duration
	// Again, when set, runs the CLI in the working directory and HOME of
	// that earlier run (for -p --resume SESSION, given in Args), rather
	// than in new ones.
	Again *Output
}

// Output is what a finished run of the CLI left.
type Output struct {
	// Dir is the scratch working directory; Home is its HOME.
	Dir, Home string
	// Stdout and Stderr are the CLI's output.
	Stdout, Stderr []byte
	// ExitCode is the CLI's exit status.
	ExitCode int
	// Result is the run's result object: stdout with the json output
	// format, the last line of type "result" with stream-json; nil if none.
	Result *Result
}

// Result is the part of the result object the CLI prints at the end of a
// run that tests read.
type Result struct {
	// Type is "result".
	Type string `json:"type"`
	// Subtype is "success" or the kind of error.
	Subtype string `json:"subtype"`
	// IsError reports a run that failed.
	IsError bool `json:"is_error"`
	// Result is the model's final text.
	Result string `json:"result"`
	// SessionID is the session's id, as hooks are given it.
	SessionID string `json:"session_id"`
	// NumTurns counts the model's turns.
	NumTurns int `json:"num_turns"`
	// PermissionDenials are the tool calls that were refused permission.
	PermissionDenials []PermissionDenial `json:"permission_denials"`
}

// PermissionDenial is one tool call the run refused, as listed in Result.
type PermissionDenial struct {
	// ToolName and ToolUseID name the call.
	ToolName  string `json:"tool_name"`
	ToolUseID string `json:"tool_use_id"`
	// ToolInput is the call's input.
	ToolInput json.RawMessage `json:"tool_input"`
}

// Run runs the CLI to the end; see Start.
func Run(t testing.TB, opts Options) *Output {
	t.Helper()
	return Start(t, opts).Wait()
}

// Start prepares a scratch directory and HOME (in t.TempDir()), writes the
// settings, and starts the CLI in it against opts.API. Wait finishes it.
// The CLI and what it started (hooks, MCP servers) are killed when it
// outlives opts.Timeout, or the test once it has failed.
func Start(t testing.TB, opts Options) *Process {
	t.Helper()
	bin := RequireBinary(t)
	if opts.API == nil {
		t.Fatal("claudetest.Start: Options.API is required")
	}
	var dir, home string
	if opts.Again != nil {
		dir, home = opts.Again.Dir, opts.Again.Home
	} else {
		root := t.TempDir()
		dir, home = filepath.Join(root, "work"), filepath.Join(root, "home")
	}
	args := prepare(t, dir, home, opts)
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(Env(opts.API.URL, home), opts.Env...)
	cmd.WaitDelay = 5 * time.Second
	agenttest.KillGroup(cmd)
	p := newProcess(t, ctx, cmd, cancel, &Output{Dir: dir, Home: home})
	p.timeout = timeout
	if opts.Stream {
		stdin, err := cmd.StdinPipe()
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		p.stdin = stdin
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start claude: %v", err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		if t.Failed() {
			cancel()
		}
		p.Wait()
	})
	if opts.Stream && opts.Prompt != "" {
		p.Send(UserMessage(opts.Prompt))
	}
	return p
}

// prepare writes the scratch directory dir and HOME home, and returns the
// CLI's arguments.
func prepare(t testing.TB, dir, home string, opts Options) []string {
	t.Helper()
	for path, content := range opts.Files {
		agenttest.WriteFile(t, filepath.Join(dir, path), []byte(content))
	}
	agenttest.Mkdir(t, dir)
	// The scratch directory is a trusted workspace, as a project one has
	// worked in: without this, -p ignores the permission rules of its
	// .claude/settings.json.
	agenttest.WriteJSONFile(t, filepath.Join(home, ".claude.json"), map[string]any{
		"projects": map[string]any{dir: map[string]any{"hasTrustDialogAccepted": true}},
	})
	args := []string{"-p"}
	if opts.Stream {
		args = append(args, "--input-format", "stream-json", "--output-format", "stream-json", "--verbose")
	} else if opts.Prompt != "" {
		args = append(args, opts.Prompt, "--output-format", "json")
	} else {
		args = append(args, "--output-format", "json")
	}
	if opts.Settings != nil {
		agenttest.WriteJSONFile(t, filepath.Join(dir, ".claude", "settings.json"), opts.Settings)
	}
	if opts.MCPConfig != nil {
		path := filepath.Join(dir, ".mcp.json")
		agenttest.WriteJSONFile(t, path, opts.MCPConfig)
		args = append(args, "--mcp-config", path, "--strict-mcp-config")
	}
	return append(args, opts.Args...)
}

// Env returns the environment the CLI runs in: the fake API at baseURL, a
// test key, HOME, and no traffic beyond the Messages API.
func Env(baseURL, home string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"TMPDIR=" + os.TempDir(),
		"ANTHROPIC_BASE_URL=" + baseURL,
		"ANTHROPIC_API_KEY=test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
	}
}

// UserMessage returns a stream-json user message holding text.
func UserMessage(text string) map[string]any {
	return map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text}}
}
