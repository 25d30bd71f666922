//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package main

import (
	"io"
	"os"
)

// readSecret is not supported here; use --password-stdin.
func readSecret(*os.File, io.Writer, string) (string, error) {
	return "", errNotTerminal
}
