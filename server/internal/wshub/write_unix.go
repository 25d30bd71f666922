//go:build unix

package wshub

import (
	"errors"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// writeNow writes what of bufs the socket takes at once, without waiting
// and without a deadline (one writev), and removes it from bufs. It
// reports whether all was written; false with a nil error means the socket
// is full. Connections that are not sockets fall back to a short deadline.
func writeNow(nc net.Conn, bufs *net.Buffers) (bool, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return writeWithin(nc, bufs, fastWrite)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false, err
	}
	var werr error
	err = rc.Write(func(fd uintptr) bool {
		for len(*bufs) > 0 {
			n, err := unix.Writev(int(fd), (*bufs)[:min(len(*bufs), maxIovecs)])
			if n > 0 {
				consume(bufs, n)
			}
			switch {
			case errors.Is(err, unix.EINTR):
			case err != nil:
				werr = err
				return true // never wait: a full socket goes to the slow path
			}
		}
		return true
	})
	if err != nil {
		return false, err
	}
	if errors.Is(werr, unix.EAGAIN) {
		return false, nil
	}
	return werr == nil, werr
}

// maxIovecs is the most buffers one writev takes (IOV_MAX).
const maxIovecs = 1024
