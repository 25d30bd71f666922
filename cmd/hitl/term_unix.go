//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// readSecret prints prompt to out and reads a line from the terminal f
// without echoing it.
func readSecret(f *os.File, out io.Writer, prompt string) (string, error) {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return "", errNotTerminal
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	quiet.Lflag |= unix.ICANON | unix.ISIG
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &quiet); err != nil {
		return "", fmt.Errorf("read password: %w", err)
	}
	defer func() {
		_ = unix.IoctlSetTermios(fd, ioctlSetTermios, old)
		fmt.Fprintln(out)
	}()
	fmt.Fprint(out, prompt)
	return readLine(bufio.NewReader(f))
}
