//go:build !unix

package agenttest

import "os/exec"

// KillGroup leaves cmd as it is: cancelling it kills the agent only.
func KillGroup(*exec.Cmd) {}

// ReapGroup does nothing: there is no process group to kill.
func ReapGroup(*exec.Cmd) {}
