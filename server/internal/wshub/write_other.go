//go:build !unix

package wshub

import "net"

// writeNow writes bufs within a short deadline, and removes what was
// written from bufs. It reports whether all was written; false with a nil
// error means the socket is full.
func writeNow(nc net.Conn, bufs *net.Buffers) (bool, error) {
	return writeWithin(nc, bufs, fastWrite)
}
