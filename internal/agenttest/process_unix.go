//go:build unix

package agenttest

import (
	"os/exec"
	"syscall"
)

// KillGroup runs cmd in a process group of its own, which is killed whole
// when cmd is cancelled: hooks and MCP servers go with the agent.
func KillGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// ReapGroup kills what is left of cmd's process group once cmd has exited:
// a hook the agent gave up on but did not kill.
func ReapGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
