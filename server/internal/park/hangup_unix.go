//go:build unix

package park

import (
	"errors"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// hungUp reports whether the peer of nc has closed or reset the
// connection, without waiting and without consuming what it sent (a peek).
func hungUp(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var gone bool
	var b [1]byte
	_ = rc.Read(func(fd uintptr) bool {
		for {
			n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
			switch {
			case errors.Is(err, unix.EINTR):
				continue
			case errors.Is(err, unix.EAGAIN):
				// Nothing to read: still there.
			case err != nil:
				gone = true // reset
			default:
				gone = n == 0 // end of stream
			}
			return true // never wait
		}
	})
	return gone
}
