//go:build !unix

package geminitest

import "os/exec"

// killGroup leaves cmd as it is: cancelling it kills Gemini CLI only.
func killGroup(*exec.Cmd) {}

// reapGroup does nothing: there is no process group to kill.
func reapGroup(*exec.Cmd) {}
