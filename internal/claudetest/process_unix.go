//go:build unix

package claudetest

import (
	"os/exec"
	"syscall"
)

// killGroup runs cmd in a process group of its own, which is killed whole
// when cmd is cancelled: hooks and MCP servers go with the CLI.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
