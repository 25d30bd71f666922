//go:build !unix

package claudetest

import "os/exec"

// killGroup leaves cmd as it is: cancelling it kills the CLI only.
func killGroup(*exec.Cmd) {}
