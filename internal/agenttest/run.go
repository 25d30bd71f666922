package agenttest

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"testing"
	"time"
)

// Command is one run of an agent CLI to its end, for Run.
type Command struct {
	// Name names the CLI in messages, such as "codex".
	Name string
	// Path is the program; Args its arguments.
	Path string
	Args []string
	// Dir is the working directory.
	Dir string
	// Env is the whole environment, "NAME=value".
	Env []string
	// Timeout bounds the run; 0 means two minutes.
	Timeout time.Duration
}

// Output is what a finished Command left.
type Output struct {
	// Stdout and Stderr are the CLI's output.
	Stdout, Stderr []byte
	// ExitCode is the CLI's exit status.
	ExitCode int
}

// Run runs c until it exits and logs its standard error. The CLI and what
// it started (hooks, MCP servers) are killed, as a process group, when it
// outlives c.Timeout, which fails the test; what is left of the group once
// it has exited is killed too. An exit status other than 0 is not a
// failure: it is in Output.ExitCode. The default bound is far above a
// run's usual seconds: on two busy cores an OpenCode run has taken more
// than a minute.
func Run(t testing.TB, c Command) Output {
	t.Helper()
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Path, c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = c.Env
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	KillGroup(cmd)
	err := cmd.Run()
	ReapGroup(cmd)
	out := Output{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	if cmd.ProcessState != nil {
		out.ExitCode = cmd.ProcessState.ExitCode()
	}
	if len(out.Stderr) > 0 {
		t.Logf("%s stderr:\n%s", c.Name, out.Stderr)
	}
	var exit *exec.ExitError
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		t.Errorf("%s ran longer than %v and was killed", c.Name, timeout)
	case err != nil && !errors.As(err, &exit):
		t.Fatalf("run %s: %v", c.Name, err)
	}
	return out
}
