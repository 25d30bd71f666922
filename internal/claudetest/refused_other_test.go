//go:build !unix

package claudetest

import (
	"net"
	"testing"
)

// refusedAddr returns a loopback address that refuses connections: one
// that was listened on and closed (another server may be given it later).
func refusedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
