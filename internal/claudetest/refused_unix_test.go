//go:build unix

package claudetest

import (
	"fmt"
	"syscall"
	"testing"
)

// refusedAddr returns a loopback address that refuses connections for as
// long as the test runs: a socket bound to it that never listens. The port
// stays taken, so no other test's server can be given it meanwhile, as it
// could be a port that was listened on and closed.
func refusedAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
}
