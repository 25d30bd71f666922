//go:build !unix

package opencodetest

import "os/exec"

// killGroup leaves cmd as it is: cancelling it kills OpenCode only.
func killGroup(*exec.Cmd) {}

// reapGroup does nothing: there is no process group to kill.
func reapGroup(*exec.Cmd) {}
