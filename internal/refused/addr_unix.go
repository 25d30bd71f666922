//go:build unix

package refused

import (
	"fmt"
	"syscall"
	"testing"
)

// Addr returns a loopback address that refuses connections until the
// test ends. Its port is held by a socket bound to it that does not
// listen: a connection is refused at once, and no listener started
// meanwhile, by this test binary or another process, is given the port
// (a port found free and closed again could be, and the "down" server
// then answers).
func Addr(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatalf("refused: socket: %v", err)
	}
	syscall.CloseOnExec(fd)
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("refused: bind: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatalf("refused: getsockname: %v", err)
	}
	in4, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		t.Fatalf("refused: bound to %T, not an IPv4 address", sa)
	}
	return fmt.Sprintf("127.0.0.1:%d", in4.Port)
}
