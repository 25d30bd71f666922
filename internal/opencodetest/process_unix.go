//go:build unix

package opencodetest

import (
	"os/exec"
	"syscall"
)

// killGroup runs cmd in a process group of its own, which is killed whole
// when cmd is cancelled: hooks and MCP servers go with OpenCode.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// reapGroup kills what is left of cmd's process group once cmd has exited:
// a hook OpenCode gave up on but did not kill.
func reapGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
